#pragma once
// Small, fast, reproducible random numbers for the Monte-Carlo engine: xoshiro256** (Blackman &
// Vigna 2018) seeded through splitmix64, so any 64-bit seed gives a well-mixed state and a run's
// stream depends only on (seed, run index), never on the thread that runs it.
#include <cmath>
#include <cstdint>

namespace trainsim::sim {

// splitmix64 (Steele, Lea & Flood 2014): a bijective mixer, used to derive seeds.
constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// The seed of run `index` of a Monte-Carlo batch seeded with `seed`, and of its independent streams.
constexpr std::uint64_t run_seed(std::uint64_t seed, std::uint64_t index, std::uint64_t stream = 0) {
  return splitmix64(splitmix64(seed ^ 0x5EEDULL) + splitmix64(index * 0x100000001B3ULL + stream));
}

class Rng {
 public:
  explicit Rng(std::uint64_t seed = 1) { reseed(seed); }
  void reseed(std::uint64_t seed) {
    std::uint64_t x = seed;
    for (auto& word : s_) {
      x = splitmix64(x);
      word = x;
    }
  }
  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in the open interval (0, 1): 53 random bits, centred, so never 0 or 1.
  double uniform() { return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53; }
  // Standard exponential, -ln U.
  double exponential() { return -std::log(uniform()); }
  // Uniform integer in [0, n) (Lemire's multiply-shift; n < 2^32).
  std::uint32_t below(std::uint32_t n) { return static_cast<std::uint32_t>(((next() >> 32) * n) >> 32); }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4]{};
};

}  // namespace trainsim::sim
