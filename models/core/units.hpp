#pragma once
// Quantities with units, as scenario files write them ("80GiB", "3.35TB/s", "400Gbps", "989TFLOPS",
// "1.5T", "2h"). Internally everything is SI in double: bytes, bytes/s, FLOP/s, seconds, watts.
// Decimal prefixes (K, M, G, T, P = 1e3..1e15) and binary ones (Ki, Mi, Gi, Ti = 2^10..2^40) are kept
// apart on purpose: GB vs GiB is where capacity plans go wrong.
#include <optional>
#include <string>
#include <string_view>

namespace trainsim {

enum class Quantity { Count, Bytes, Bandwidth, FlopRate, Time, Power, Money, Fraction };

// Binary sizes and the hour, for conversions in code (scenario files go through parse_quantity).
constexpr double kBytesPerMiB = 1048576.0;
constexpr double kBytesPerGiB = 1073741824.0;
constexpr double kSecondsPerHour = 3600.0;

// Parses `text` as a quantity of `kind`. Returns nullopt with `why` filled when it cannot.
std::optional<double> parse_quantity(std::string_view text, Quantity kind, std::string* why = nullptr);

// An example of a well-formed value of that kind, for error messages.
const char* quantity_example(Quantity kind);
const char* quantity_name(Quantity kind);

// The plausible range of an input quantity, in SI units; checked where the value is parsed.
struct QuantityRange {
  double min = 0;
  double max = 1.7976931348623157e308;
  bool min_exclusive = false;  // (min, max] rather than [min, max]
  bool contains(double v) const { return (min_exclusive ? v > min : v >= min) && v <= max; }
};
// A value of `kind` in its natural unit for messages ("80.00 GiB", "400 GB/s", "989 TFLOP/s", "2.0 h", "$3").
std::string format_quantity(double value, Quantity kind);
// "a size in [1.00 GiB, 16.00 TiB], such as \"80GiB\" ..." for error messages.
std::string quantity_range_text(const QuantityRange& range, Quantity kind);

// Human-readable formatting for tables ("74.3 GiB", "1.42 s", "989 TFLOP/s").
std::string format_bytes(double bytes);       // binary units: GiB
std::string format_count(double n);           // 8.03B, 405M
std::string format_seconds(double s);         // 1.42 s, 3.2 h, 41.5 d
std::string format_rate(double flops);        // TFLOP/s
std::string format_bandwidth(double bytes_per_s);  // 25.0 GB/s, 258 kB/s: three significant digits, decimal units
std::string format_usd(double usd);           // $59, $1.2K, $3.45M
std::string format_number(double v, int significant = 6);  // 0.8, 1e-09, nan: a plain value for a message
std::string fixed(double v, int digits = 2);  // 3.14: `digits` after the point, for table cells and notes

}  // namespace trainsim
