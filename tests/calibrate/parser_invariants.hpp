#pragma once
// What every calibrate parser promises for any input whatever (used by the robustness tests and the fuzz
// target fuzz_calibrate_parsers.cpp): no crash, no exception other than InputError, no NaN, infinite, negative
// or zero measurement accepted, the warm-up never compared, messages printable.
#include <string>
#include <string_view>

namespace trainsim {

// Runs parse_training_log (+ summarize), parse_nccl_tests_log (+ add_nccl_tests) and parse_gemm_csv
// (+ check_gemm_peaks, add_gemm_csv) on `data`; returns the first broken promise, or "" when all hold.
std::string check_parsers(std::string_view data);
// One parser each (the libFuzzer targets in tests/fuzz): "" when every promise holds.
std::string check_training_log(std::string_view data);
std::string check_nccl(std::string_view data);
std::string check_gemm(std::string_view data);

}  // namespace trainsim
