#include "models/core/units.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace trainsim {
namespace {

struct Unit {
  std::string_view suffix;
  double factor;
};

// Suffixes per kind, longest first within a family so "GiB" wins over "B".
constexpr std::array kByteUnits{Unit{"KiB", 1024.0}, Unit{"MiB", 1048576.0}, Unit{"GiB", 1073741824.0},
                                Unit{"TiB", 1099511627776.0}, Unit{"PiB", 1125899906842624.0},
                                Unit{"KB", 1e3}, Unit{"kB", 1e3}, Unit{"MB", 1e6}, Unit{"GB", 1e9},
                                Unit{"TB", 1e12}, Unit{"PB", 1e15}, Unit{"B", 1.0}};
// Bandwidth: bytes/s (B/s, GB/s, GiB/s) or bits/s (Gbps, Gb/s). 1 Gbps = 1e9/8 bytes/s.
constexpr std::array kBandwidthUnits{
    Unit{"KiB/s", 1024.0}, Unit{"MiB/s", 1048576.0}, Unit{"GiB/s", 1073741824.0}, Unit{"TiB/s", 1099511627776.0},
    Unit{"KB/s", 1e3}, Unit{"kB/s", 1e3}, Unit{"MB/s", 1e6}, Unit{"GB/s", 1e9}, Unit{"TB/s", 1e12},
    Unit{"B/s", 1.0}, Unit{"GBps", 1e9}, Unit{"TBps", 1e12}, Unit{"MBps", 1e6},
    Unit{"Kbps", 1e3 / 8}, Unit{"kbps", 1e3 / 8}, Unit{"Mbps", 1e6 / 8}, Unit{"Gbps", 1e9 / 8},
    Unit{"Tbps", 1e12 / 8}, Unit{"Kb/s", 1e3 / 8}, Unit{"Mb/s", 1e6 / 8}, Unit{"Gb/s", 1e9 / 8},
    Unit{"Tb/s", 1e12 / 8}, Unit{"bps", 1.0 / 8}, Unit{"b/s", 1.0 / 8}};
constexpr std::array kFlopUnits{Unit{"PFLOPS", 1e15}, Unit{"TFLOPS", 1e12}, Unit{"GFLOPS", 1e9},
                                Unit{"MFLOPS", 1e6}, Unit{"PFLOP/s", 1e15}, Unit{"TFLOP/s", 1e12},
                                Unit{"GFLOP/s", 1e9}, Unit{"FLOP/s", 1.0}, Unit{"FLOPS", 1.0}};
constexpr std::array kTimeUnits{Unit{"ns", 1e-9}, Unit{"us", 1e-6}, Unit{"ms", 1e-3}, Unit{"min", 60.0},
                                Unit{"s", 1.0}, Unit{"m", 60.0}, Unit{"h", 3600.0}, Unit{"d", 86400.0},
                                Unit{"w", 604800.0}, Unit{"y", 365.0 * 86400.0}};
constexpr std::array kCountUnits{Unit{"K", 1e3}, Unit{"k", 1e3}, Unit{"M", 1e6}, Unit{"B", 1e9},
                                 Unit{"G", 1e9}, Unit{"T", 1e12}, Unit{"P", 1e15}};
constexpr std::array kPowerUnits{Unit{"kW", 1e3}, Unit{"MW", 1e6}, Unit{"W", 1.0}};
constexpr std::array kMoneyUnits{Unit{"USD", 1.0}, Unit{"$", 1.0}};
constexpr std::array kFractionUnits{Unit{"%", 0.01}};

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

template <std::size_t N>
std::optional<double> match(std::string_view suffix, const std::array<Unit, N>& units) {
  for (const auto& u : units)
    if (suffix == u.suffix) return u.factor;
  return std::nullopt;
}

std::optional<double> unit_factor(std::string_view suffix, Quantity kind) {
  if (suffix.empty()) return 1.0;
  switch (kind) {
    case Quantity::Bytes: return match(suffix, kByteUnits);
    case Quantity::Bandwidth: return match(suffix, kBandwidthUnits);
    case Quantity::FlopRate: return match(suffix, kFlopUnits);
    case Quantity::Time: return match(suffix, kTimeUnits);
    case Quantity::Count: return match(suffix, kCountUnits);
    case Quantity::Power: return match(suffix, kPowerUnits);
    case Quantity::Money: return match(suffix, kMoneyUnits);
    case Quantity::Fraction: return match(suffix, kFractionUnits);
  }
  return std::nullopt;
}

}  // namespace

const char* quantity_example(Quantity kind) {
  switch (kind) {
    case Quantity::Bytes: return "a size such as \"80GiB\", \"141GB\" or a number of bytes";
    case Quantity::Bandwidth: return "a bandwidth such as \"3.35TB/s\", \"400Gbps\" or bytes per second";
    case Quantity::FlopRate: return "a FLOP rate such as \"989TFLOPS\" or FLOP per second";
    case Quantity::Time: return "a duration such as \"90s\", \"30min\", \"2h\", \"54d\" or seconds";
    case Quantity::Count: return "a count such as 4096, \"15T\" or \"1.5B\"";
    case Quantity::Power: return "a power such as \"700W\" or \"1.2kW\"";
    case Quantity::Money: return "an amount in USD such as 2.5 or \"$2.5\"";
    case Quantity::Fraction: return "a fraction such as 0.1 or \"10%\"";
  }
  return "a number";
}

const char* quantity_name(Quantity kind) {
  switch (kind) {
    case Quantity::Bytes: return "bytes";
    case Quantity::Bandwidth: return "bytes/s";
    case Quantity::FlopRate: return "FLOP/s";
    case Quantity::Time: return "s";
    case Quantity::Count: return "count";
    case Quantity::Power: return "W";
    case Quantity::Money: return "USD";
    case Quantity::Fraction: return "fraction";
  }
  return "";
}

std::optional<double> parse_quantity(std::string_view text, Quantity kind, std::string* why) {
  auto fail = [&](std::string reason) -> std::optional<double> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  std::string_view s = trim(text);
  bool dollar_prefix = false;
  if (kind == Quantity::Money && !s.empty() && s.front() == '$') {
    dollar_prefix = true;
    s.remove_prefix(1);
  }
  double value = 0.0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec == std::errc::result_out_of_range) return fail("the number is beyond the range of a double");
  if (ec != std::errc{} || ptr == s.data()) return fail("no number at the start");
  std::string_view suffix = trim(std::string_view(ptr, static_cast<std::size_t>(s.data() + s.size() - ptr)));
  if (dollar_prefix && !suffix.empty()) return fail("unexpected text after the amount");
  auto factor = unit_factor(suffix, kind);
  if (!factor) return fail("unknown unit \"" + std::string(suffix) + "\" for " + quantity_name(kind));
  double result = value * *factor;
  if (!std::isfinite(result)) return fail("not a finite number");
  return result;
}

std::string format_bytes(double bytes) {
  char buf[64];
  double a = std::fabs(bytes);
  if (a >= 1099511627776.0) std::snprintf(buf, sizeof buf, "%.2f TiB", bytes / 1099511627776.0);
  else if (a >= kBytesPerGiB) std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / kBytesPerGiB);
  else if (a >= 1048576.0) std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / 1048576.0);
  else if (a >= 1024.0) std::snprintf(buf, sizeof buf, "%.1f KiB", bytes / 1024.0);
  else std::snprintf(buf, sizeof buf, "%.0f B", bytes);
  return buf;
}

std::string format_count(double n) {
  char buf[64];
  double a = std::fabs(n);
  if (a >= 1e12) std::snprintf(buf, sizeof buf, "%.2fT", n / 1e12);
  else if (a >= 1e9) std::snprintf(buf, sizeof buf, "%.2fB", n / 1e9);
  else if (a >= 1e6) std::snprintf(buf, sizeof buf, "%.1fM", n / 1e6);
  else if (a >= 1e3) std::snprintf(buf, sizeof buf, "%.1fK", n / 1e3);
  else std::snprintf(buf, sizeof buf, "%.0f", n);
  return buf;
}

std::string format_number(double v, int significant) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", significant, v);
  return buf;
}

std::string format_seconds(double s) {
  char buf[64];
  if (s >= 86400.0 * 2) std::snprintf(buf, sizeof buf, "%.1f d", s / 86400.0);
  else if (s >= 7200.0) std::snprintf(buf, sizeof buf, "%.1f h", s / kSecondsPerHour);
  else if (s >= 120.0) std::snprintf(buf, sizeof buf, "%.1f min", s / 60.0);
  else if (s >= 1.0) std::snprintf(buf, sizeof buf, "%.2f s", s);
  else std::snprintf(buf, sizeof buf, "%.1f ms", s * 1e3);
  return buf;
}

std::string format_bandwidth(double v) {
  static const struct {
    double scale;
    const char* unit;
  } units[] = {{1e12, "TB/s"}, {1e9, "GB/s"}, {1e6, "MB/s"}, {1e3, "kB/s"}, {1, "B/s"}};
  for (const auto& u : units)
    if (v >= u.scale || u.scale == 1) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.3g %s", v / u.scale, u.unit);
      return buf;
    }
  return "";
}

std::string format_quantity(double v, Quantity kind) {
  char buf[64];
  switch (kind) {
    case Quantity::Bytes: return format_bytes(v);
    case Quantity::Bandwidth:
      if (v >= 1e12) std::snprintf(buf, sizeof buf, "%g TB/s", v / 1e12);
      else if (v >= 1e9) std::snprintf(buf, sizeof buf, "%g GB/s", v / 1e9);
      else std::snprintf(buf, sizeof buf, "%g MB/s", v / 1e6);
      return buf;
    case Quantity::FlopRate: std::snprintf(buf, sizeof buf, "%g TFLOP/s", v / 1e12); return buf;
    case Quantity::Time:
      if (v > 0 && v < 1e-3) { std::snprintf(buf, sizeof buf, "%g us", v * 1e6); return buf; }
      if (v >= 365.0 * 86400.0) { std::snprintf(buf, sizeof buf, "%g years", v / (365.0 * 86400.0)); return buf; }
      return format_seconds(v);
    case Quantity::Count: std::snprintf(buf, sizeof buf, "%g", v); return buf;
    case Quantity::Power: std::snprintf(buf, sizeof buf, "%g W", v); return buf;
    case Quantity::Money: std::snprintf(buf, sizeof buf, "$%g", v); return buf;
    case Quantity::Fraction: std::snprintf(buf, sizeof buf, "%g", v); return buf;
  }
  return "";
}

std::string quantity_range_text(const QuantityRange& r, Quantity kind) {
  std::string text = std::string("a value in ") + (r.min_exclusive ? "(" : "[") + format_quantity(r.min, kind) + ", " +
                     (r.max >= 1e300 ? std::string("inf") : format_quantity(r.max, kind)) + "]";
  return text + ": " + quantity_example(kind);
}

std::string format_usd(double usd) {
  char buf[64];
  const double a = std::fabs(usd);
  if (a >= 1e6) std::snprintf(buf, sizeof buf, "$%.2fM", usd / 1e6);
  else if (a >= 1e3) std::snprintf(buf, sizeof buf, "$%.1fK", usd / 1e3);
  else std::snprintf(buf, sizeof buf, "$%.0f", usd);
  return buf;
}

std::string format_rate(double flops) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f TFLOP/s", flops / 1e12);
  return buf;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace trainsim
