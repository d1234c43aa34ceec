#pragma once
// Server-rendered inline SVG charts for the self-contained HTML report: no network, no JavaScript, readable
// when printed. Each chart is one `<svg class="chart">` string; every data mark (a series' line path, a point
// circle, a bar rect) carries class="mark" and the root's data-marks attribute counts them, so a headless
// browser can check what was drawn. Output is well-formed XML and deterministic (same input, same bytes).
// The charts lay out what they are given; they compute no statistics.
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

namespace trainsim::svg {

struct Axis {
  std::string label;            // "time to train"
  std::string unit;             // "days"; shown as "time to train (days)"
  bool log = false;             // log10 scale: values <= 0 are dropped from the chart
  double min = NAN, max = NAN;  // NAN: from the data, rounded out to "nice" ticks (1, 2, 2.5, 5 x 10^k)
};

struct Series {
  std::string name;               // legend entry (and the hover text of the line)
  std::vector<double> x, y;       // same length; non-finite pairs are skipped
  std::vector<std::string> tips;  // optional, one per point: the <title> of the point mark
  bool line = true;               // a path through the points
  bool points = false;            // a circle per point
  bool step = false;              // a step function (post: horizontal then vertical), for time series and CDFs
  bool highlight = false;         // drawn thicker, on top, the other series lighter (e.g. the Pareto front)
  bool dashed = false;
};

// A vertical (x) or horizontal (y) dashed reference line with its label. Auto ranges widen to show it.
struct Marker {
  std::string label;
  double value;
};

// scatter: line = false, points = true; CDF: step = true.
struct LineChart {
  std::string title;
  Axis x, y;
  std::vector<Series> series;
  std::vector<Marker> x_markers, y_markers;  // e.g. the Young/Daly interval, a GPU's memory capacity
  int width = 720, height = 380;             // pixels; at least 240 x 160
  // Given: exactly these x ticks (e.g. the GPU counts a search tried), the range covering them and the data with a
  // margin; empty: nice ticks.
  std::vector<double> x_ticks;
};

struct BarSegment {
  std::string name;
  std::vector<double> values;     // one per category; non-finite and zero values draw nothing
  std::vector<std::string> tips;  // optional, one per category
};

struct BarChart {
  std::string title;
  Axis y;                               // the value axis; a linear one always includes 0
  std::string category_label;           // e.g. "pipeline stage"
  std::vector<std::string> categories;  // x categories
  std::vector<BarSegment> segments;     // stacked (or grouped) series, each a legend entry
  bool stacked = true;                  // false: grouped side by side
  std::vector<Marker> y_markers;        // e.g. capacity 80 GiB
  int width = 720, height = 380;
};

// A timeline (Gantt): one row per entity (a GPU), a bar per span of time coloured by its category (a legend entry).
struct TimelineSpan {
  int row = 0;
  double start = 0, duration = 0;
  int category = 0;  // index into TimelineChart::categories
  std::string tip;
};
struct TimelineChart {
  std::string title;
  Axis x;                                // time
  std::string row_label;                 // the y axis: what a row is ("GPU")
  std::vector<std::string> rows;         // top to bottom
  std::vector<std::string> categories;   // legend, one colour each
  std::vector<TimelineSpan> spans;
  int width = 720, height = 260;
};

// A chart with nothing to draw (no usable point, no non-zero bar) is a frame that says "no data".
std::string render(const LineChart& chart);
std::string render(const BarChart& chart);
std::string render(const TimelineChart& chart);
// Escapes & < > " ' for XML text and attribute values; drops control characters XML forbids; bytes that are not
// UTF-8 become U+FFFD.
std::string escape_xml(const std::string& s);
// The colour of series / segment i: Okabe-Ito's colour-blind-safe palette, cycled (yellow last: faint on paper).
const char* palette(std::size_t i);

}  // namespace trainsim::svg
