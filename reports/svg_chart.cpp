#include "svg_chart.hpp"

#include <algorithm>
#include <charconv>
#include <optional>
#include <string_view>

#include "models/core/utf8.hpp"

namespace trainsim::svg {

namespace {

// Layout in pixels. The plot frame's left edge is kLeft; its top is kTitleBand + legend rows x kLegendRow +
// kAboveFrame (44 without a legend); its bottom is height - kBottom; its right is width - kRight.
constexpr double kLeft = 72;        // y tick labels and the rotated y axis label
constexpr double kRight = 24;       // half of the last x tick label
constexpr double kTitleBand = 32;   // the title's line
constexpr double kLegendRow = 18;
constexpr double kAboveFrame = 12;  // half of the top y tick label, and air
constexpr double kBottom = 50;      // x tick labels and the x axis label
constexpr double kMinFrameHeight = 120;  // what a long legend leaves
constexpr double kClipPad = 5;           // a point on the frame's edge is drawn whole
constexpr int kMinWidth = 240, kMinHeight = 160;
constexpr std::size_t kMaxLineVertices = 1500;  // thinning keeps a 5,000-point chart small
constexpr std::size_t kMaxAllPoints = 2000;     // point marks are kept one per datum up to this many
constexpr double kCharWidth = 6.5;              // estimate of a 12px sans-serif character, for layout only

constexpr const char* kTextColour = "#222";
constexpr const char* kAxisColour = "#333";
constexpr const char* kGridColour = "#e3e3e3";
constexpr const char* kMarkerColour = "#555";

// ---- numbers ----

std::string trim_zeros(std::string s) {
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

// Fixed or scientific notation, whatever the C locale (a decimal comma would break the SVG).
std::string format_number(double v, std::chars_format format, int decimals) {
  char buf[64];
  const auto [end, error] = std::to_chars(buf, buf + sizeof buf, v, format, decimals);
  return error == std::errc{} ? std::string(buf, end) : "0";
}

// A pixel coordinate with at most 2 decimals; never nan, inf or -0.
std::string px(double v) {
  if (!std::isfinite(v)) v = 0;
  v = std::clamp(v, -1e6, 1e6);  // a point far outside a fixed range is clipped anyway: keep it short
  return trim_zeros(format_number(v, std::chars_format::fixed, 2));
}

// Decimals that show every multiple of `step` exactly: 500 -> 0, 2.5 -> 1, 0.25 -> 2.
int decimals_for(double step) {
  double scaled = std::fabs(step);
  for (int d = 0; d < 9; ++d, scaled *= 10)
    if (std::fabs(scaled - std::round(scaled)) <= 1e-6 * std::max(1.0, scaled)) return d;
  return 9;
}

// 1.5e-05 -> "1.5e-5": tiny and huge tick values.
std::string exponent_form(double v, double step) {
  const double scale = std::pow(10.0, std::floor(std::log10(std::fabs(v))));
  const std::string s = format_number(v, std::chars_format::scientific, std::min(decimals_for(step / scale), 6));
  const std::size_t e = s.find('e');
  if (e == std::string::npos) return s;  // not finite
  const int exponent = std::stoi(s.substr(e + 1));
  return trim_zeros(s.substr(0, e)) + "e" + std::to_string(exponent);
}

// A tick label: 1.5k, 2M, 0.25, 1e-5. `step` (the tick spacing) sets the decimals, so neighbours differ.
std::string compact(double v, double step) {
  const double magnitude = std::fabs(v);
  if (magnitude != 0 && (magnitude < 1e-3 || magnitude >= 1e15)) return exponent_form(v, step);
  struct Suffix {
    double divisor;
    const char* text;
  };
  static constexpr Suffix suffixes[] = {{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}, {1, ""}};
  for (const auto& [divisor, text] : suffixes) {
    if (magnitude < divisor && divisor != 1) continue;
    return trim_zeros(format_number(v / divisor, std::chars_format::fixed, decimals_for(step / divisor))) + text;
  }
  return "";
}

// ---- axes: ranges and ticks ----

bool usable(double v, bool log) { return std::isfinite(v) && (!log || v > 0); }
double transformed(double v, bool log) { return log ? std::log10(v) : v; }

// An axis' range (log10 of the values on a log axis) and its ticks (values).
struct Domain {
  double lo = 0, hi = 1;
  bool log = false;
  std::vector<double> ticks;
  double step = 1;  // linear tick spacing, for the labels' decimals
};

struct Bounds {
  double lo, hi;
  bool fixed_lo, fixed_hi;
};

// The caller's min/max where given (on a log axis only positive ones), else the data's.
Bounds initial_bounds(const Axis& a, double data_lo, double data_hi) {
  bool fixed_lo = usable(a.min, a.log), fixed_hi = usable(a.max, a.log);
  if (fixed_lo && fixed_hi && !(a.max > a.min)) fixed_lo = fixed_hi = false;  // empty or inverted: ignored
  return {fixed_lo ? transformed(a.min, a.log) : data_lo, fixed_hi ? transformed(a.max, a.log) : data_hi, fixed_lo,
          fixed_hi};
}

// A flat range (one value, all equal, or a fixed bound past the data) gets room on its free side(s).
void widen_if_flat(Bounds& b, bool log) {
  if (b.hi > b.lo) return;
  const double ref = b.fixed_hi && !b.fixed_lo ? b.hi : b.lo;
  const double pad = log ? 0.5 : (ref != 0 ? std::fabs(ref) * 0.1 : 1.0);
  if (b.fixed_lo) {
    b.hi = b.lo + pad;
  } else if (b.fixed_hi) {
    b.lo = b.hi - pad;
  } else {
    b.lo -= pad;
    b.hi += pad;
  }
}

// The smallest of 1, 2, 2.5, 5 x 10^k at least span / target.
double nice_step(double span, double target) {
  const double raw = span / target;
  if (!(raw > 0) || !std::isfinite(raw)) return 1;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0})
    if (raw <= m * magnitude * (1 + 1e-9)) return m * magnitude;
  return 10 * magnitude;
}

std::vector<double> multiples(double lo, double hi, double step) {
  std::vector<double> out;
  if (!std::isfinite(lo / step) || !std::isfinite(hi / step) || hi / step - lo / step > 1000) return out;
  const double last = std::floor(hi / step + 1e-9);
  for (double i = std::ceil(lo / step - 1e-9); i <= last && out.size() < 64; ++i) out.push_back(i * step);
  return out;
}

// Powers of ten (every k-th decade when there are many); 2x and 5x too when there are at most two decades.
std::vector<double> log_ticks(double lo, double hi) {
  const double decades = hi - lo;
  const int every = std::max(1, static_cast<int>(std::ceil(decades / 8)));
  const std::vector<double> mantissas = decades <= 2 ? std::vector<double>{1, 2, 5} : std::vector<double>{1};
  std::vector<double> out;
  for (int k = static_cast<int>(std::floor(lo)); k <= static_cast<int>(std::ceil(hi)); ++k) {
    if (((k % every) + every) % every != 0) continue;
    for (double m : mantissas) {
      const double t = std::log10(m) + k;
      const double v = m * std::pow(10.0, k);
      if (t >= lo - 1e-9 && t <= hi + 1e-9 && std::isfinite(v) && v > 0) out.push_back(v);
    }
  }
  return out;
}

Domain linear_domain(Bounds b, double target_ticks) {
  const double step = nice_step(b.hi - b.lo, target_ticks);
  const double rounded_lo = std::floor(b.lo / step) * step, rounded_hi = std::ceil(b.hi / step) * step;
  if (!b.fixed_lo && std::isfinite(rounded_lo)) b.lo = rounded_lo;  // near the largest double, not rounded out
  if (!b.fixed_hi && std::isfinite(rounded_hi)) b.hi = rounded_hi;
  return {b.lo, b.hi, false, multiples(b.lo, b.hi, step), step};
}

Domain log_domain(Bounds b) {
  if (!b.fixed_lo) b.lo = std::floor(b.lo);
  if (!b.fixed_hi) b.hi = std::ceil(b.hi);
  return {b.lo, b.hi, true, log_ticks(b.lo, b.hi), 0};
}

// The axis' range and ticks for these (usable) values; nullopt when there are none.
std::optional<Domain> make_domain(const Axis& a, const std::vector<double>& values, double target_ticks,
                                  const std::vector<double>& ticks = {}) {
  if (values.empty()) return std::nullopt;
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  Bounds b = initial_bounds(a, transformed(*lo, a.log), transformed(*hi, a.log));
  std::vector<double> given;
  for (double t : ticks)
    if (usable(t, a.log)) given.push_back(t);
  if (!given.empty()) {
    std::sort(given.begin(), given.end());
    if (!b.fixed_lo) b.lo = std::min(b.lo, transformed(given.front(), a.log));
    if (!b.fixed_hi) b.hi = std::max(b.hi, transformed(given.back(), a.log));
    widen_if_flat(b, a.log);
    const double margin = 0.05 * (b.hi - b.lo);  // the outer ticks' points stay off the frame
    if (!b.fixed_lo) b.lo -= margin;
    if (!b.fixed_hi) b.hi += margin;
    std::vector<double> inside;
    for (double t : given)
      if (transformed(t, a.log) >= b.lo - 1e-9 && transformed(t, a.log) <= b.hi + 1e-9) inside.push_back(t);
    double step = 1;  // label decimals for the closest two ticks
    for (std::size_t i = 1; i < inside.size(); ++i)
      if (inside[i] > inside[i - 1]) step = std::min(step, inside[i] - inside[i - 1]);
    return Domain{b.lo, b.hi, a.log, inside, a.log ? 0 : step};
  }
  widen_if_flat(b, a.log);
  return a.log ? log_domain(b) : linear_domain(b, target_ticks);
}

std::string tick_label(const Domain& d, double v) { return compact(v, d.log ? v : d.step); }

std::string axis_title(const Axis& a) {
  if (a.unit.empty()) return a.label;
  if (a.label.empty()) return a.unit;
  return a.label + " (" + a.unit + ")";
}

// ---- pixels ----

struct Frame {
  double left, top, right, bottom;
  double width() const { return right - left; }
  double height() const { return bottom - top; }
};

Frame frame_for(int width, int height, int legend_rows) {
  return {kLeft, kTitleBand + legend_rows * kLegendRow + kAboveFrame, width - kRight, height - kBottom};
}

// Maps a value to a pixel: lo to `from`, hi to `to` (y runs upward: from = the frame's bottom).
struct Scale {
  Domain d;
  double from, to;
  double operator()(double v) const { return from + (transformed(v, d.log) - d.lo) / (d.hi - d.lo) * (to - from); }
  bool shows(double v) const {
    if (!usable(v, d.log)) return false;
    const double p = (*this)(v);
    return p >= std::min(from, to) - 0.5 && p <= std::max(from, to) + 0.5;
  }
};

// ---- XML ----

std::string attr(std::string_view name, const std::string& value) {
  return " " + std::string(name) + "=\"" + escape_xml(value) + "\"";
}
std::string attr(std::string_view name, double value) { return attr(name, px(value)); }

// The chart's body and its count of data marks (the root's data-marks attribute).
struct Canvas {
  std::string body;
  int marks = 0;
};

void text(Canvas& c, double x, double y, const std::string& content, const std::string& extra = "") {
  c.body += "<text" + attr("x", x) + attr("y", y) + extra + ">" + escape_xml(content) + "</text>\n";
}

// A data mark, with the hover text as an SVG <title> child (the browser's native tooltip) when there is one.
void mark(Canvas& c, const std::string& tag, const std::string& attrs, const std::string& tip) {
  ++c.marks;
  c.body += "<" + tag + " class=\"mark\"" + attrs;
  c.body += tip.empty() ? "/>\n" : "><title>" + escape_xml(tip) + "</title></" + tag + ">\n";
}

std::string root(const std::string& title, int width, int height, const Canvas& c) {
  const std::string w = std::to_string(width), h = std::to_string(height);
  return "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\"" + attr("aria-label", title) +
         " viewBox=\"0 0 " + w + " " + h + "\" width=\"" + w + "\" height=\"" + h + "\" data-marks=\"" +
         std::to_string(c.marks) + "\" font-family=\"system-ui, sans-serif\" font-size=\"12\">\n" + c.body + "</svg>";
}

// White paper and the title: dark text on white even inside a dark page.
void paper_and_title(Canvas& c, const std::string& title, int width, int height) {
  c.body += "<rect" + attr("width", width) + attr("height", height) + " fill=\"#fff\"/>\n";
  text(c, width / 2.0, 22, title,
       std::string(" text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\" fill=\"") + kTextColour + "\"");
}

std::string no_data_chart(const std::string& title, int width, int height) {
  Canvas c;
  paper_and_title(c, title, width, height);
  const Frame f = frame_for(width, height, 0);
  c.body += "<rect" + attr("x", f.left) + attr("y", f.top) + attr("width", f.width()) + attr("height", f.height()) +
            " fill=\"none\" stroke=\"" + kGridColour + "\" stroke-width=\"1.5\"/>\n";
  text(c, (f.left + f.right) / 2, (f.top + f.bottom) / 2, "no data",
       std::string(" text-anchor=\"middle\" font-size=\"14\" fill=\"") + kMarkerColour + "\"");
  return root(title, width, height, c);
}

// ---- legend ----

enum class Swatch { line, point, box };
struct LegendEntry {
  std::string name;
  const char* colour;
  Swatch swatch;
  bool dashed, highlight;
};

struct LegendLayout {
  std::vector<std::pair<double, double>> slots;  // x of the swatch, text baseline; one per entry shown
  int rows = 0;
};

std::size_t characters(const std::string& s) {  // UTF-8 code points, for width estimates
  return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char ch) { return (ch & 0xC0) != 0x80; }));
}

// Entries left to right in rows under the title, wrapping at the frame's right edge; at most max_rows rows.
LegendLayout layout_legend(const std::vector<LegendEntry>& entries, int width, int max_rows) {
  LegendLayout out;
  double x = kLeft;
  for (const auto& e : entries) {
    const double w = 22 + kCharWidth * static_cast<double>(characters(e.name)) + 14;
    if (out.rows == 0 || (x + w > width - kRight && x > kLeft)) {
      if (out.rows == max_rows) break;
      ++out.rows;
      x = kLeft;
    }
    out.slots.emplace_back(x, kTitleBand + (out.rows - 1) * kLegendRow + 13);
    x += w;
  }
  return out;
}

// Rows that leave the frame at least kMinFrameHeight tall; entries past them are counted as "+N more".
int max_legend_rows(int height) {
  return std::max(1, static_cast<int>((height - kTitleBand - kAboveFrame - kBottom - kMinFrameHeight) / kLegendRow));
}

void draw_swatch(Canvas& c, const LegendEntry& e, double x, double baseline) {
  const std::string colour = e.colour;
  if (e.swatch == Swatch::box) {
    c.body += "<rect" + attr("x", x) + attr("y", baseline - 10) + " width=\"14\" height=\"12\" fill=\"" + colour + "\"/>";
  } else if (e.swatch == Swatch::point) {
    c.body += "<circle" + attr("cx", x + 8) + attr("cy", baseline - 4) + " r=\"4\" fill=\"" + colour + "\"/>";
  } else {
    c.body += "<path d=\"M" + px(x) + "," + px(baseline - 4) + "h18\" stroke=\"" + colour + "\" stroke-width=\"" +
              (e.highlight ? "3" : "2") + "\"" + (e.dashed ? " stroke-dasharray=\"6 4\"" : "") + "/>";
  }
}

void draw_legend(Canvas& c, const std::vector<LegendEntry>& entries, const LegendLayout& layout) {
  if (layout.slots.empty()) return;
  c.body += std::string("<g class=\"legend\" fill=\"") + kTextColour + "\">\n";
  for (std::size_t i = 0; i < layout.slots.size(); ++i) {
    const auto [x, baseline] = layout.slots[i];
    draw_swatch(c, entries[i], x, baseline);
    text(c, x + 22, baseline, entries[i].name);
  }
  if (layout.slots.size() < entries.size()) {
    const auto [x, baseline] = layout.slots.back();
    text(c, x, baseline + kLegendRow, "+" + std::to_string(entries.size() - layout.slots.size()) + " more");
  }
  c.body += "</g>\n";
}

// ---- axes and frame ----

std::string grid_path(const std::string& d) {
  return d.empty() ? "" : "<path d=\"" + d + "\" fill=\"none\" stroke=\"" + kGridColour + "\" stroke-width=\"1.5\"/>\n";
}

void draw_horizontal_grid(Canvas& c, const Frame& f, const Scale& y) {
  std::string d;
  for (double t : y.d.ticks) d += "M" + px(f.left) + "," + px(y(t)) + "H" + px(f.right);
  c.body += grid_path(d);
}

void draw_vertical_grid(Canvas& c, const Frame& f, const Scale& x) {
  std::string d;
  for (double t : x.d.ticks) d += "M" + px(x(t)) + "," + px(f.top) + "V" + px(f.bottom);
  c.body += grid_path(d);
}

// The left and bottom axis lines, and a zero line where a linear y range spans zero (negative values).
void draw_axis_lines(Canvas& c, const Frame& f, const Scale& y) {
  std::string d = "M" + px(f.left) + "," + px(f.top) + "V" + px(f.bottom) + "H" + px(f.right);
  if (!y.d.log && y.d.lo < 0 && y.d.hi > 0) d += "M" + px(f.left) + "," + px(y(0)) + "H" + px(f.right);
  c.body += "<path d=\"" + d + "\" fill=\"none\" stroke=\"" + kAxisColour + "\" stroke-width=\"1.5\"/>\n";
}

void draw_y_ticks(Canvas& c, const Frame& f, const Scale& y, const std::string& title) {
  c.body += std::string("<g fill=\"") + kTextColour + "\" font-size=\"11\" text-anchor=\"end\">\n";
  for (double t : y.d.ticks) text(c, f.left - 6, y(t) + 4, tick_label(y.d, t));
  c.body += "</g>\n";
  const std::string at = "translate(16 " + px((f.top + f.bottom) / 2) + ") rotate(-90)";
  text(c, 0, 0, title, attr("transform", at) + " text-anchor=\"middle\" fill=\"" + kTextColour + "\"");
}

void draw_x_title(Canvas& c, const Frame& f, int height, const std::string& title) {
  text(c, (f.left + f.right) / 2, height - 10, title, std::string(" text-anchor=\"middle\" fill=\"") + kTextColour + "\"");
}

void draw_x_ticks(Canvas& c, const Frame& f, const Scale& x) {
  c.body += std::string("<g fill=\"") + kTextColour + "\" font-size=\"11\" text-anchor=\"middle\">\n";
  for (double t : x.d.ticks) text(c, x(t), f.bottom + 16, tick_label(x.d, t));
  c.body += "</g>\n";
}

// The plot's own viewport: data marks past a fixed range are clipped, without ids that could clash in a page.
std::string open_plot(const Frame& f) {
  const double x = f.left - kClipPad, y = f.top - kClipPad, w = f.width() + 2 * kClipPad, h = f.height() + 2 * kClipPad;
  return "<svg class=\"plot\"" + attr("x", x) + attr("y", y) + attr("width", w) + attr("height", h) + " viewBox=\"" +
         px(x) + " " + px(y) + " " + px(w) + " " + px(h) + "\" overflow=\"hidden\">\n";
}

// ---- reference markers ----

std::string halo_text_attrs(const char* anchor) {
  return std::string(" text-anchor=\"") + anchor + "\" fill=\"" + kTextColour +
         "\" stroke=\"#fff\" stroke-width=\"3\" paint-order=\"stroke\"";
}

std::string marker_line(const std::string& d) {
  return "<path d=\"" + d + "\" fill=\"none\" stroke=\"" + kMarkerColour +
         "\" stroke-width=\"1.5\" stroke-dasharray=\"5 4\"/>\n";
}

void draw_x_marker(Canvas& c, const Frame& f, const Scale& x, const Marker& m) {
  if (!x.shows(m.value)) return;
  const double at = x(m.value);
  c.body += marker_line("M" + px(at) + "," + px(f.top) + "V" + px(f.bottom));
  const bool right_side = at > f.left + 0.7 * f.width();  // keep the label inside the frame
  text(c, right_side ? at - 4 : at + 4, f.top + 12, m.label, halo_text_attrs(right_side ? "end" : "start"));
}

void draw_y_marker(Canvas& c, const Frame& f, const Scale& y, const Marker& m) {
  if (!y.shows(m.value)) return;
  const double at = y(m.value);
  c.body += marker_line("M" + px(f.left) + "," + px(at) + "H" + px(f.right));
  const bool below = at < f.top + 16;  // no room above the line
  text(c, f.right - 4, below ? at + 14 : at - 4, m.label, halo_text_attrs("end"));
}

// ---- line charts ----

struct Point {
  double x, y;
  std::size_t index;  // into the series' x, y and tips
};

std::vector<Point> usable_points(const Series& s, const Axis& x, const Axis& y) {
  std::vector<Point> out;
  const std::size_t n = std::min(s.x.size(), s.y.size());
  for (std::size_t i = 0; i < n; ++i)
    if (usable(s.x[i], x.log) && usable(s.y[i], y.log)) out.push_back({s.x[i], s.y[i], i});
  return out;
}

// At most about `max` points: every k-th, plus the first, the last, the lowest and the highest (peaks survive).
std::vector<Point> thin(const std::vector<Point>& points, std::size_t max) {
  if (points.size() <= max) return points;
  const std::size_t k = (points.size() + max - 1) / max;
  const auto by_y = [](const Point& a, const Point& b) { return a.y < b.y; };
  const auto [low, high] = std::minmax_element(points.begin(), points.end(), by_y);
  const auto low_i = static_cast<std::size_t>(low - points.begin()), high_i = static_cast<std::size_t>(high - points.begin());
  std::vector<Point> out;
  for (std::size_t i = 0; i < points.size(); ++i)
    if (i % k == 0 || i + 1 == points.size() || i == low_i || i == high_i) out.push_back(points[i]);
  return out;
}

// The points drawn: all of them when they are marked one by one and not too many, else thinned.
std::vector<Point> drawn_points(const Series& s, const Axis& x, const Axis& y) {
  std::vector<Point> points = usable_points(s, x, y);
  if (s.points && points.size() <= kMaxAllPoints) return points;
  return thin(points, kMaxLineVertices);
}

std::string line_path(const std::vector<Point>& points, const Scale& x, const Scale& y, bool step) {
  std::string d = "M" + px(x(points[0].x)) + "," + px(y(points[0].y));
  for (std::size_t i = 1; i < points.size(); ++i)
    d += step ? "H" + px(x(points[i].x)) + "V" + px(y(points[i].y)) : "L" + px(x(points[i].x)) + "," + px(y(points[i].y));
  return d;
}

struct SeriesStyle {
  const char* colour;
  bool dimmed;  // another series is highlighted
};

void draw_line(Canvas& c, const Series& s, const SeriesStyle& style, const std::vector<Point>& points, const Scale& x,
               const Scale& y) {
  std::string attrs = attr("d", line_path(points, x, y, s.step)) + " fill=\"none\" stroke=\"" + style.colour +
                      "\" stroke-width=\"" + (s.highlight ? "3" : "2") + "\" stroke-linejoin=\"round\"";
  if (s.dashed) attrs += " stroke-dasharray=\"6 4\"";
  if (style.dimmed) attrs += " stroke-opacity=\"0.5\"";
  mark(c, "path", attrs, s.name);
}

void draw_points(Canvas& c, const Series& s, const SeriesStyle& style, const std::vector<Point>& points, const Scale& x,
                 const Scale& y) {
  c.body += std::string("<g fill=\"") + style.colour + "\"" + (style.dimmed ? " fill-opacity=\"0.5\"" : "") +
            (s.highlight ? " stroke=\"#000\" stroke-width=\"1.5\"" : "") + ">\n";
  const std::string radius = s.highlight ? " r=\"4\"" : " r=\"3\"";
  for (const Point& p : points) {
    const std::string tip = p.index < s.tips.size() ? s.tips[p.index] : "";
    mark(c, "circle", attr("cx", x(p.x)) + attr("cy", y(p.y)) + radius, tip);
  }
  c.body += "</g>\n";
}

// Whether the vertices print to more than one pixel position: a path on one spot has an empty box, draws nothing.
bool spans_pixels(const std::vector<Point>& points, const Scale& x, const Scale& y) {
  const auto at = [&](const Point& p) { return px(x(p.x)) + "," + px(y(p.y)); };
  const std::string first = at(points[0]);
  return std::any_of(points.begin() + 1, points.end(), [&](const Point& p) { return at(p) != first; });
}

void draw_series(Canvas& c, const Series& s, const SeriesStyle& style, const std::vector<Point>& points, const Scale& x,
                 const Scale& y) {
  if (points.empty()) return;
  const bool has_line = s.line && points.size() >= 2 && spans_pixels(points, x, y);
  if (has_line) draw_line(c, s, style, points, x, y);
  if (s.points || !has_line) draw_points(c, s, style, points, x, y);  // a lone point, or a markless series, stays visible
}

// Non-highlighted series first, so the highlighted ones are drawn on top.
std::vector<std::size_t> drawing_order(const std::vector<Series>& series) {
  std::vector<std::size_t> order(series.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_partition(order.begin(), order.end(), [&](std::size_t i) { return !series[i].highlight; });
  return order;
}

std::vector<LegendEntry> line_legend(const LineChart& chart) {
  std::vector<LegendEntry> out;
  if (chart.series.size() < 2) return out;
  for (std::size_t i = 0; i < chart.series.size(); ++i) {
    const Series& s = chart.series[i];
    if (s.name.empty()) continue;
    out.push_back({s.name, palette(i), s.line ? Swatch::line : Swatch::point, s.dashed, s.highlight});
  }
  return out;
}

void append_marker_values(std::vector<double>& values, const std::vector<Marker>& markers, bool log) {
  for (const Marker& m : markers)
    if (usable(m.value, log)) values.push_back(m.value);
}

int clamped_width(int w) { return std::max(w, kMinWidth); }
int clamped_height(int h) { return std::max(h, kMinHeight); }
double x_tick_target(const Frame& f) { return std::max(2.0, f.width() / 90); }
double y_tick_target(const Frame& f) { return std::max(2.0, f.height() / 50); }

// ---- bar charts ----

// One bar: its value span (stacked: from the segments below it) and where it stands.
struct Bar {
  std::size_t category, segment;
  double from, to;
};

bool drawable(double v, bool log) { return usable(v, log) && v != 0; }

// Stacked: positives pile up from 0, negatives down from 0; grouped: each from 0.
std::vector<Bar> layout_bars(const BarChart& chart) {
  std::vector<Bar> out;
  for (std::size_t c = 0; c < chart.categories.size(); ++c) {
    double up = 0, down = 0;
    for (std::size_t s = 0; s < chart.segments.size(); ++s) {
      const auto& values = chart.segments[s].values;
      if (c >= values.size() || !drawable(values[c], chart.y.log)) continue;
      const double v = values[c];
      double& base = v > 0 ? up : down;
      const double from = chart.stacked ? base : 0;
      out.push_back({c, s, from, from + v});
      if (chart.stacked) base += v;
    }
  }
  return out;
}

// The values the y range must show: every bar's ends, 0 on a linear axis (a bar's base), and the markers.
std::vector<double> bar_range_values(const BarChart& chart, const std::vector<Bar>& bars) {
  std::vector<double> values;
  for (const Bar& b : bars)
    for (double v : {b.from, b.to})
      if (usable(v, chart.y.log)) values.push_back(v);
  if (!chart.y.log) values.push_back(0);
  append_marker_values(values, chart.y_markers, chart.y.log);
  return values;
}

struct Slot {
  double x, width;
};

// Each category a band; a stacked bar 60% of it, grouped bars sharing 80% side by side.
Slot bar_slot(const Frame& f, const BarChart& chart, const Bar& b) {
  const double band = f.width() / static_cast<double>(chart.categories.size());
  const double band_left = f.left + band * static_cast<double>(b.category);
  if (chart.stacked) return {band_left + 0.2 * band, 0.6 * band};
  const double width = 0.8 * band / static_cast<double>(chart.segments.size());
  return {band_left + 0.1 * band + width * static_cast<double>(b.segment), width};
}

// On a log axis a bar from 0 starts at the frame's bottom.
double bar_end(const Scale& y, const Frame& f, double v) { return usable(v, y.d.log) ? y(v) : f.bottom; }

void draw_bars(Canvas& c, const Frame& f, const BarChart& chart, const std::vector<Bar>& bars, const Scale& y) {
  for (const Bar& b : bars) {
    const Slot slot = bar_slot(f, chart, b);
    const double a = bar_end(y, f, b.from), z = bar_end(y, f, b.to);
    const auto& tips = chart.segments[b.segment].tips;
    const std::string attrs = attr("x", slot.x) + attr("y", std::min(a, z)) + attr("width", slot.width) +
                              attr("height", std::fabs(z - a)) + " fill=\"" + palette(b.segment) + "\"";
    mark(c, "rect", attrs, b.category < tips.size() ? tips[b.category] : "");
  }
}

// The words of `name` packed into lines of at most `fit` characters (a longer word alone on its line).
std::vector<std::string> wrap_words(const std::string& name, std::size_t fit) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < name.size()) {
    std::size_t end = name.find(' ', start);
    if (end == std::string::npos) end = name.size();
    const std::string word = name.substr(start, end - start);
    if (!word.empty()) {
      if (!lines.empty() && characters(lines.back()) + 1 + characters(word) <= fit) lines.back() += " " + word;
      else lines.push_back(word);
    }
    start = end + 1;
  }
  return lines;
}

// Category names under their bands: every one, on two lines where one is too wide for its band ("grad norm, clip,
// zero"); only when even two lines overlap, every m-th one.
void draw_categories(Canvas& c, const Frame& f, int height, const BarChart& chart) {
  const std::size_t n = chart.categories.size();
  const double band = f.width() / static_cast<double>(n);
  const auto fit = static_cast<std::size_t>(std::max(1.0, std::floor((band - 8) / kCharWidth)));
  std::vector<std::vector<std::string>> wrapped;
  bool fits = true;
  for (const auto& name : chart.categories) {
    wrapped.push_back(wrap_words(name, fit));
    fits = fits && wrapped.back().size() <= 2;
    for (const auto& line : wrapped.back()) fits = fits && characters(line) <= fit;
  }
  c.body += std::string("<g fill=\"") + kTextColour + "\" font-size=\"11\" text-anchor=\"middle\">\n";
  if (fits) {
    for (std::size_t i = 0; i < n; ++i) {
      const double x = f.left + band * (static_cast<double>(i) + 0.5);
      c.body += "<text" + attr("x", x) + attr("y", f.bottom + 16) + ">";
      for (std::size_t k = 0; k < wrapped[i].size(); ++k)
        c.body += "<tspan" + attr("x", x) + attr("dy", k == 0 ? 0.0 : 12.0) + ">" + escape_xml(wrapped[i][k]) + (k + 1 < wrapped[i].size() ? " " : "") + "</tspan>";
      c.body += "</text>\n";
    }
  } else {
    std::size_t longest = 1;
    for (const auto& name : chart.categories) longest = std::max(longest, characters(name));
    const auto every = static_cast<std::size_t>(std::ceil((kCharWidth * static_cast<double>(longest) + 8) / band));
    for (std::size_t i = 0; i < n; i += std::max<std::size_t>(every, 1))
      text(c, f.left + band * (static_cast<double>(i) + 0.5), f.bottom + 16, chart.categories[i]);
  }
  c.body += "</g>\n";
  draw_x_title(c, f, height, chart.category_label);
}

std::vector<LegendEntry> bar_legend(const BarChart& chart) {
  std::vector<LegendEntry> out;
  for (std::size_t i = 0; i < chart.segments.size(); ++i)
    if (!chart.segments[i].name.empty()) out.push_back({chart.segments[i].name, palette(i), Swatch::box, false, false});
  return out;
}

}  // namespace

std::string escape_xml(const std::string& s) {
  const std::string text = valid_utf8(s);  // bytes that are not UTF-8 (from a trace, a file name) never reach the page
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 forbids control characters other than tab, newline and carriage return.
        if (static_cast<unsigned char>(ch) >= 0x20 || ch == '\t' || ch == '\n' || ch == '\r') out += ch;
    }
  }
  return out;
}

const char* palette(std::size_t i) {
  // Okabe & Ito (2008), "Color Universal Design": blue, vermillion, bluish green, reddish purple, orange, sky blue,
  // black, yellow.
  static constexpr const char* colours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                            "#E69F00", "#56B4E9", "#000000", "#F0E442"};
  return colours[i % (sizeof colours / sizeof colours[0])];
}

std::string render(const LineChart& chart) {
  const int width = clamped_width(chart.width), height = clamped_height(chart.height);
  std::vector<std::vector<Point>> points;
  std::vector<double> xs, ys;
  for (const Series& s : chart.series) {
    points.push_back(drawn_points(s, chart.x, chart.y));
    for (const Point& p : usable_points(s, chart.x, chart.y)) {  // the range covers the points thinning dropped
      xs.push_back(p.x);
      ys.push_back(p.y);
    }
  }
  if (xs.empty()) return no_data_chart(chart.title, width, height);
  append_marker_values(xs, chart.x_markers, chart.x.log);
  append_marker_values(ys, chart.y_markers, chart.y.log);

  const std::vector<LegendEntry> legend = line_legend(chart);
  const LegendLayout legend_layout = layout_legend(legend, width, max_legend_rows(height));
  const Frame f = frame_for(width, height, legend_layout.rows);
  const Scale x{*make_domain(chart.x, xs, x_tick_target(f), chart.x_ticks), f.left, f.right};
  const Scale y{*make_domain(chart.y, ys, y_tick_target(f)), f.bottom, f.top};

  Canvas c;
  paper_and_title(c, chart.title, width, height);
  draw_legend(c, legend, legend_layout);
  draw_horizontal_grid(c, f, y);
  draw_vertical_grid(c, f, x);
  draw_axis_lines(c, f, y);
  draw_y_ticks(c, f, y, axis_title(chart.y));
  draw_x_ticks(c, f, x);
  draw_x_title(c, f, height, axis_title(chart.x));
  c.body += open_plot(f);
  const bool any_highlight = std::any_of(chart.series.begin(), chart.series.end(), [](const Series& s) { return s.highlight; });
  for (std::size_t i : drawing_order(chart.series))
    draw_series(c, chart.series[i], {palette(i), any_highlight && !chart.series[i].highlight}, points[i], x, y);
  c.body += "</svg>\n";
  for (const Marker& m : chart.x_markers) draw_x_marker(c, f, x, m);
  for (const Marker& m : chart.y_markers) draw_y_marker(c, f, y, m);
  return root(chart.title, width, height, c);
}

std::string render(const BarChart& chart) {
  const int width = clamped_width(chart.width), height = clamped_height(chart.height);
  const std::vector<Bar> bars = layout_bars(chart);
  if (bars.empty()) return no_data_chart(chart.title, width, height);  // a chart without marks says so

  const std::vector<LegendEntry> legend = bar_legend(chart);
  const LegendLayout legend_layout = layout_legend(legend, width, max_legend_rows(height));
  const Frame f = frame_for(width, height, legend_layout.rows);
  const Scale y{*make_domain(chart.y, bar_range_values(chart, bars), y_tick_target(f)), f.bottom, f.top};

  Canvas c;
  paper_and_title(c, chart.title, width, height);
  draw_legend(c, legend, legend_layout);
  draw_horizontal_grid(c, f, y);
  draw_y_ticks(c, f, y, axis_title(chart.y));
  draw_categories(c, f, height, chart);
  c.body += open_plot(f);
  draw_bars(c, f, chart, bars, y);
  c.body += "</svg>\n";
  draw_axis_lines(c, f, y);  // over the bars: the zero line stays visible
  for (const Marker& m : chart.y_markers) draw_y_marker(c, f, y, m);
  return root(chart.title, width, height, c);
}

std::string render(const TimelineChart& chart) {
  const int width = clamped_width(chart.width), height = clamped_height(chart.height);
  std::vector<double> xs{0.0};
  bool any = false;
  for (const TimelineSpan& sp : chart.spans)
    if (std::isfinite(sp.start) && std::isfinite(sp.duration) && sp.duration > 0 && sp.row >= 0 &&
        sp.row < static_cast<int>(chart.rows.size()) && sp.category >= 0 && sp.category < static_cast<int>(chart.categories.size()))
      xs.push_back(sp.start + sp.duration), any = true;
  if (!any) return no_data_chart(chart.title, width, height);

  std::vector<LegendEntry> legend;
  for (std::size_t i = 0; i < chart.categories.size(); ++i) legend.push_back({chart.categories[i], palette(i), Swatch::box, false, false});
  const LegendLayout legend_layout = layout_legend(legend, width, max_legend_rows(height));
  const Frame f = frame_for(width, height, legend_layout.rows);
  const Scale x{*make_domain(chart.x, xs, x_tick_target(f), {}), f.left, f.right};
  const double band = f.height() / static_cast<double>(chart.rows.size());

  Canvas c;
  paper_and_title(c, chart.title, width, height);
  draw_legend(c, legend, legend_layout);
  draw_vertical_grid(c, f, x);
  // Row names where y ticks go, and what a row is as the y axis title.
  c.body += std::string("<g fill=\"") + kTextColour + "\" font-size=\"11\" text-anchor=\"end\">\n";
  for (std::size_t r = 0; r < chart.rows.size(); ++r) text(c, f.left - 6, f.top + (static_cast<double>(r) + 0.5) * band + 4, chart.rows[r]);
  c.body += "</g>\n";
  const std::string at = "translate(16 " + px((f.top + f.bottom) / 2) + ") rotate(-90)";
  text(c, 0, 0, chart.row_label, attr("transform", at) + " text-anchor=\"middle\" fill=\"" + kTextColour + "\"");
  draw_x_ticks(c, f, x);
  draw_x_title(c, f, height, axis_title(chart.x));
  c.body += open_plot(f);
  for (const TimelineSpan& sp : chart.spans) {
    if (!(std::isfinite(sp.start) && std::isfinite(sp.duration) && sp.duration > 0) || sp.row < 0 || sp.row >= static_cast<int>(chart.rows.size()) ||
        sp.category < 0 || sp.category >= static_cast<int>(chart.categories.size()))
      continue;
    const double x0 = x(sp.start), x1 = x(sp.start + sp.duration);
    const double y0 = f.top + sp.row * band + 0.15 * band;
    mark(c, "rect", attr("x", x0) + attr("y", y0) + attr("width", std::max(x1 - x0, 0.5)) + attr("height", 0.7 * band) + attr("fill", palette(static_cast<std::size_t>(sp.category))), sp.tip);
  }
  c.body += "</svg>\n";
  c.body += "<path d=\"M" + px(f.left) + "," + px(f.top) + "V" + px(f.bottom) + "H" + px(f.right) + "\" fill=\"none\" stroke=\"" + kAxisColour +
            "\" stroke-width=\"1.5\"/>\n";
  return root(chart.title, width, height, c);
}

}  // namespace trainsim::svg
