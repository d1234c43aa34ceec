#pragma once
// Checks on flag values that CLI11 would otherwise convert silently (it wraps "-1" into an unsigned seed and
// saturates 2^64 to the largest one): each runs on the text as typed, before conversion, and a failure is exit 2.
#include <CLI/CLI.hpp>

namespace trainsim::cli {

// A random seed: decimal digits only, 0 to 18446744073709551615 (2^64 - 1).
CLI::Validator seed_value();

}  // namespace trainsim::cli
