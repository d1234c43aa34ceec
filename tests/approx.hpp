#pragma once
// doctest::Approx(v) accepts |x - v| < epsilon * (scale + max(|x|, |v|)) with scale 1 by default, an absolute
// slack of epsilon: Approx(15e-6).epsilon(1e-4) accepts anything within 0.1 ms, a test that cannot fail for
// microsecond quantities. Every test compares relatively, with doctest's default or a stated epsilon.
#include <doctest/doctest.h>

#include <limits>

namespace trainsim::test {
// The smallest positive scale keeps exact zeros equal (doctest compares with a strict <).
inline doctest::Approx approx(double value) { return doctest::Approx(value).scale(std::numeric_limits<double>::min()); }
}  // namespace trainsim::test
