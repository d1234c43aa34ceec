// The inline SVG charts of the HTML report: marks counted in data-marks, hover titles, escaping, log axes, step
// paths, pixel positions, stacked bars, size on 5,000 points, the empty case, well-formed and deterministic output.
//
// Layout at the default 720 x 380 (reports/svg_chart.cpp): the plot frame runs from x = 72 (left margin) to
// 720 - 24 = 696, and from y = 32 (title) + 18 per legend row + 12 to 380 - 50 = 330. Without a legend (one
// series) the frame is x 72..696 (624 px), y 44..330 (286 px); a bar chart always has a legend row: y 62..330.
#include <doctest/doctest.h>

#include "../approx.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <regex>
#include <string>
#include <vector>

#include "reports/svg_chart.hpp"

using namespace trainsim::svg;
using trainsim::test::approx;

namespace {

std::size_t count(const std::string& s, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = s.find(needle); at != std::string::npos; at = s.find(needle, at + needle.size())) ++n;
  return n;
}

// The value of the first `name="..."` after `from`.
std::string attribute(const std::string& s, const std::string& name, std::size_t from = 0) {
  const std::string key = " " + name + "=\"";
  const auto at = s.find(key, from);
  if (at == std::string::npos) return "";
  const auto begin = at + key.size();
  return s.substr(begin, s.find('"', begin) - begin);
}

int data_marks(const std::string& svg) { return std::stoi(attribute(svg, "data-marks")); }

// The opening tags of the data marks of one kind, e.g. "<rect class=\"mark\"".
std::vector<std::string> mark_tags(const std::string& svg, const std::string& tag) {
  std::vector<std::string> out;
  const std::string open = "<" + tag + " class=\"mark\"";
  for (auto at = svg.find(open); at != std::string::npos; at = svg.find(open, at + 1))
    out.push_back(svg.substr(at, svg.find('>', at) - at + 1));
  return out;
}

// The `d` of the first data path.
std::string first_mark_path(const std::string& svg) {
  const auto tags = mark_tags(svg, "path");
  return tags.empty() ? "" : attribute(tags[0], "d");
}

bool known_entity(const std::string& s, std::size_t at) {
  for (const char* e : {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"})
    if (s.compare(at, std::string(e).size(), e) == 0) return true;
  return false;
}

// A tiny XML check: one root; every <tag opened is closed by </tag> in order or self-closed; no stray '>';
// quotes balanced inside tags; '&' only as one of the five XML entities.
bool well_formed(const std::string& s) {
  std::vector<std::string> open;
  bool seen_root = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '&' && !known_entity(s, i)) return false;
    if (s[i] == '>') return false;
    if (s[i] != '<') continue;
    const auto end = s.find('>', i);
    if (end == std::string::npos) return false;
    const std::string inside = s.substr(i + 1, end - i - 1);
    if (inside.find('<') != std::string::npos || count(inside, "\"") % 2 != 0) return false;
    for (std::size_t j = i; j < end; ++j)
      if (s[j] == '&' && !known_entity(s, j)) return false;
    if (inside[0] == '/') {
      if (open.empty() || open.back() != inside.substr(1)) return false;
      open.pop_back();
    } else {
      if (open.empty() && seen_root) return false;  // a second root
      seen_root = true;
      if (inside.back() != '/') open.push_back(inside.substr(0, inside.find_first_of(" /")));
    }
    i = end;
  }
  return seen_root && open.empty();
}

Series series(std::vector<double> x, std::vector<double> y) {
  Series s;
  s.x = std::move(x);
  s.y = std::move(y);
  return s;
}

// One series on fixed 0..10 x 0..10 axes: no legend, frame 72..696 x 44..330.
LineChart fixed_square(Series s) {
  LineChart c;
  c.title = "fixed";
  c.x.min = 0;
  c.x.max = 10;
  c.y.min = 0;
  c.y.max = 10;
  c.series.push_back(std::move(s));
  return c;
}

LineChart three_series_with_points() {
  LineChart c;
  c.title = "layouts";
  Series a = series({1, 2, 3}, {1, 4, 9});
  Series b = series({1, 2, 3, 4}, {2, 3, 5, 7});
  Series d = series({1, 2, 3, 4, 5}, {1, NAN, 2, 3, 4});  // the NaN pair is skipped: 4 points
  for (Series* s : {&a, &b, &d}) s->points = true;
  a.name = "a";
  b.name = "b";
  d.name = "d";
  c.series = {a, b, d};
  return c;
}

BarChart stacked_one_two() {
  BarChart c;
  c.title = "memory per stage";
  c.category_label = "pipeline stage";
  c.categories = {"0"};
  c.segments = {{"weights", {1}, {}}, {"activations", {2}, {}}};
  return c;
}

// 5,000 points of a noisy curve, every one with a hover text.
Series five_thousand(bool points) {
  Series s;
  s.name = "sweep";
  s.points = points;
  for (int i = 0; i < 5000; ++i) {
    s.x.push_back(i * 0.37);
    s.y.push_back(1e3 + 250 * std::sin(i * 0.01) + (i % 7) * 3.3);
    s.tips.push_back("tp=" + std::to_string(i % 8 + 1) + " pp=" + std::to_string(i % 16 + 1) + " dp=" + std::to_string(i));
  }
  return s;
}

}  // namespace

TEST_CASE("the tag-balance checker rejects what is not well-formed") {
  CHECK(well_formed("<svg a=\"1\"><g><rect/></g><text>a &amp; b</text></svg>"));
  CHECK_FALSE(well_formed("<svg><g></svg>"));      // g never closed
  CHECK_FALSE(well_formed("<svg><g></svg></g>"));  // closed out of order
  CHECK_FALSE(well_formed("<svg>a & b</svg>"));    // bare ampersand
  CHECK_FALSE(well_formed("<svg>a > b</svg>"));    // bare '>'
}

TEST_CASE("data-marks counts every class=\"mark\": one line per series and one circle per usable point") {
  // 3 lines + 3 + 4 + 4 circles (the NaN pair skipped) = 14.
  const std::string svg = render(three_series_with_points());
  CHECK(count(svg, "class=\"mark\"") == 14);
  CHECK(data_marks(svg) == 14);
  CHECK(mark_tags(svg, "circle").size() == 11);
  CHECK(svg.rfind("<svg class=\"chart\"", 0) == 0);
  for (const char* a : {"role=\"img\"", "aria-label=\"layouts\"", "viewBox=\"0 0 720 380\"", "width=\"720\"",
                        "height=\"380\"", "xmlns=\"http://www.w3.org/2000/svg\""})
    CHECK(svg.find(a) != std::string::npos);
}

TEST_CASE("a point's tip is its escaped <title>") {
  Series s = series({1, 2}, {3, 4});
  s.points = true;
  s.line = false;
  s.tips = {"tp=2 & pp<4", "tp=8"};
  const std::string svg = render(fixed_square(s));
  CHECK(svg.find("<title>tp=2 &amp; pp&lt;4</title></circle>") != std::string::npos);
  CHECK(svg.find("<title>tp=8</title></circle>") != std::string::npos);
}

TEST_CASE("a title with markup characters is escaped in aria-label and in the text") {
  LineChart c = fixed_square(series({1}, {1}));
  c.title = "<&>\"'";
  const std::string svg = render(c);
  CHECK(svg.find("aria-label=\"&lt;&amp;&gt;&quot;&apos;\"") != std::string::npos);
  CHECK(svg.find(">&lt;&amp;&gt;&quot;&apos;</text>") != std::string::npos);
  CHECK(svg.find("<&>") == std::string::npos);
  CHECK(well_formed(svg));
  CHECK(escape_xml(std::string("a\x01" "b")) == "ab");  // a control character would break XML 1.0
}

TEST_CASE("a log axis drops non-positive points and ticks at powers of ten") {
  // x = -1 and 0 cannot sit on a log axis: 3 of the 5 points remain; the range 1..100 ticks 1, 10, 100 (2 decades:
  // 2x and 5x too).
  LineChart c;
  c.title = "log";
  c.x.log = true;
  Series s = series({-1, 0, 1, 10, 100}, {1, 2, 3, 4, 5});
  s.line = false;
  s.points = true;
  c.series = {s};
  const std::string svg = render(c);
  CHECK(data_marks(svg) == 3);
  for (const char* label : {">1<", ">10<", ">100<", ">20<", ">50<"}) CHECK(svg.find(label) != std::string::npos);
  CHECK(svg.find("nan") == std::string::npos);
  CHECK(svg.find("inf") == std::string::npos);
  // Points at 1 and 100 sit on the frame's left and right edges.
  const auto circles = mark_tags(svg, "circle");
  REQUIRE(circles.size() == 3);
  CHECK(attribute(circles[0], "cx") == "72");
  CHECK(attribute(circles[1], "cx") == "384");  // log10(10) is half way: 72 + 624 / 2
  CHECK(attribute(circles[2], "cx") == "696");
}

TEST_CASE("a step series goes across then up") {
  // Two points (0, 0) and (10, 10) on fixed 0..10 axes: from the bottom-left corner (72, 330) across to x = 696,
  // then up to y = 44.
  Series two = series({0, 10}, {0, 10});
  two.step = true;
  CHECK(first_mark_path(render(fixed_square(two))) == "M72,330H696V44");
  // Four points: M, then H and V for each of the 3 that follow = 7 commands.
  Series four = series({1, 2, 3, 4}, {1, 3, 2, 5});
  four.step = true;
  const std::string d = first_mark_path(render(fixed_square(four)));
  CHECK(std::count_if(d.begin(), d.end(), [](char ch) { return std::isalpha(static_cast<unsigned char>(ch)); }) == 7);
  CHECK(count(d, "H") == 3);
  CHECK(count(d, "V") == 3);
}

TEST_CASE("a point at the axis minimum lands on the frame's left edge") {
  // x 5..15, y 0..1 fixed: (5, 0) maps to the left margin 72 and the bottom 380 - 50 = 330; (15, 1) to 696, 44.
  LineChart c;
  c.title = "edge";
  c.x.min = 5;
  c.x.max = 15;
  c.y.min = 0;
  c.y.max = 1;
  Series s = series({5, 15}, {0, 1});
  s.line = false;
  s.points = true;
  c.series = {s};
  const auto circles = mark_tags(render(c), "circle");
  REQUIRE(circles.size() == 2);
  CHECK(attribute(circles[0], "cx") == "72");
  CHECK(attribute(circles[0], "cy") == "330");
  CHECK(attribute(circles[1], "cx") == "696");
  CHECK(attribute(circles[1], "cy") == "44");
}

TEST_CASE("all-equal values and a lone point divide by nothing") {
  // y all 5: the range widens by 0.5 each side to 4.5..5.5, rounded out to 4.4..5.6 (ticks 0.2 apart), so 5 is
  // the middle of the frame: (44 + 330) / 2 = 187. x 1..3 over 624 px: 72, 384, 696.
  const std::string flat = render(LineChart{"flat", {}, {}, {series({1, 2, 3}, {5, 5, 5})}, {}, {}, 720, 380, {}});
  CHECK(first_mark_path(flat) == "M72,187L384,187L696,187");
  // One point, line only: a one-vertex path would draw nothing, so it is drawn as a circle (1 mark).
  const std::string lone = render(LineChart{"lone", {}, {}, {series({3}, {7})}, {}, {}, 720, 380, {}});
  CHECK(data_marks(lone) == 1);
  CHECK(mark_tags(lone, "circle").size() == 1);
  // Two points on one spot: a path there would have an empty box, so they are drawn as 2 circles.
  const std::string same_spot = render(LineChart{"spot", {}, {}, {series({2, 2}, {4, 4})}, {}, {}, 720, 380, {}});
  CHECK(data_marks(same_spot) == 2);
  CHECK(mark_tags(same_spot, "path").empty());
  for (const std::string& svg : {flat, lone, same_spot}) {
    CHECK(svg.find("nan") == std::string::npos);
    CHECK(well_formed(svg));
  }
}

TEST_CASE("a stacked bar of 1 and 2 is two rects in height ratio 1:2") {
  // The legend takes a row: frame y 62..330 (268 px). Range 0..3 (ticks 1 apart): heights 268/3 = 89.33 and
  // 2 x 268/3 = 178.67; the bottom one sits on y = 330, the top one reaches the frame's top, 62.
  const auto rects = mark_tags(render(stacked_one_two()), "rect");
  REQUIRE(rects.size() == 2);
  const double h1 = std::stod(attribute(rects[0], "height")), h2 = std::stod(attribute(rects[1], "height"));
  CHECK(h1 == approx(89.33));
  CHECK(h2 == approx(178.67));
  CHECK(h2 / h1 == doctest::Approx(2.0).epsilon(1e-3));
  CHECK(std::stod(attribute(rects[0], "y")) + h1 == approx(330));
  CHECK(attribute(rects[1], "y") == "62");
}

TEST_CASE("grouped bars with a negative value stand on the zero line") {
  // -2 and 3 side by side: range -2..3 (ticks 1 apart) over 268 px; zero at 330 - 2/5 x 268 = 222.8. The
  // negative bar hangs from 222.8 for 107.2 px; the positive one rises from it to 62 (160.8 px). Each bar is
  // 0.8 x 624 / 2 = 249.6 wide, the first starting 0.1 x 624 = 62.4 into the band: x = 134.4 and 384.
  BarChart c;
  c.title = "signed";
  c.categories = {"a"};
  c.segments = {{"loss", {-2}, {"lost 2 & more"}}, {"gain", {3}, {}}};
  c.stacked = false;
  const std::string svg = render(c);
  const auto rects = mark_tags(svg, "rect");
  REQUIRE(rects.size() == 2);
  CHECK(attribute(rects[0], "x") == "134.4");
  CHECK(attribute(rects[0], "y") == "222.8");
  CHECK(attribute(rects[0], "height") == "107.2");
  CHECK(attribute(rects[1], "x") == "384");
  CHECK(attribute(rects[1], "y") == "62");
  CHECK(attribute(rects[1], "height") == "160.8");
  CHECK(attribute(rects[1], "width") == "249.6");
  CHECK(svg.find("<title>lost 2 &amp; more</title></rect>") != std::string::npos);
  CHECK(svg.find(">-2<") != std::string::npos);  // the y axis shows the negative range
}

TEST_CASE("5,000 points stay well under 300 KB") {
  // Line and points: more than 2,000 points, so thinned to every 4th (ceil(5000 / 1500)) + the last + the lowest
  // and highest = at most 1,253 vertices and circles. Line only: the same path.
  LineChart both;
  both.title = "5,000 points";
  both.series = {five_thousand(true)};
  const std::string svg = render(both);
  MESSAGE("5,000 points with marks and tips: ", svg.size(), " bytes");
  CHECK(svg.size() < 300000);
  CHECK(mark_tags(svg, "circle").size() <= 1253);
  CHECK(mark_tags(svg, "circle").size() >= 1250);
  LineChart line = both;
  line.series[0].points = false;
  const std::string line_svg = render(line);
  MESSAGE("5,000 points as a line: ", line_svg.size(), " bytes");
  CHECK(line_svg.size() < 100000);
  CHECK(count(first_mark_path(line_svg), "L") <= 1252);
  CHECK(well_formed(svg));
}

TEST_CASE("up to 2,000 points with point marks are all kept") {
  LineChart c;
  c.title = "2,000";
  Series s = five_thousand(true);
  s.x.resize(2000);
  s.y.resize(2000);
  c.series = {s};
  CHECK(mark_tags(render(c), "circle").size() == 2000);
}

TEST_CASE("an empty chart says no data") {
  LineChart all_nan;
  all_nan.title = "nothing";
  all_nan.series = {series({NAN, 1}, {2, INFINITY})};
  BarChart no_categories;
  no_categories.title = "nothing either";
  BarChart all_zero = stacked_one_two();  // zero-height bars draw nothing: a chart without marks must say so
  all_zero.segments = {{"idle", {0}, {}}, {"broken", {NAN}, {}}};
  for (const std::string& svg : {render(all_nan), render(LineChart{}), render(no_categories), render(all_zero)}) {
    CHECK(svg.find(">no data</text>") != std::string::npos);
    CHECK(data_marks(svg) == 0);
    CHECK(count(svg, "class=\"mark\"") == 0);
    CHECK(well_formed(svg));
  }
}

TEST_CASE("tick labels are compact") {
  // x fixed 0..2000 over 624 px: about 624 / 90 = 6.9 ticks, 2000 / 6.9 = 289 rounds up to 500: 0, 500, 1k,
  // 1.5k, 2k. x fixed 0..2e6: 500k steps, 2M. y fixed 0..1 with a 206 px frame (height 300): 206 / 50 = 4.1
  // ticks, 1 / 4.1 = 0.24 rounds up to 0.25.
  LineChart c = fixed_square(series({1, 2}, {0.1, 0.9}));
  c.x.max = 2000;
  c.y.max = 1;
  c.height = 300;
  const std::string thousands = render(c);
  for (const char* label : {">500<", ">1k<", ">1.5k<", ">2k<", ">0.25<", ">0.75<"})
    CHECK(thousands.find(label) != std::string::npos);
  c.x.max = 2e6;
  const std::string millions = render(c);
  for (const char* label : {">500k<", ">1.5M<", ">2M<"}) CHECK(millions.find(label) != std::string::npos);
  // A log axis over 1..1000 (3 decades: powers of ten only).
  LineChart log = fixed_square(series({1, 1000}, {1, 2}));
  log.x = Axis{"GPUs", "", true};
  const std::string svg = render(log);
  for (const char* label : {">1<", ">10<", ">100<", ">1k<"}) CHECK(svg.find(label) != std::string::npos);
  CHECK(svg.find(">20<") == std::string::npos);
}

TEST_CASE("tiny tick values are written with an exponent") {
  // y fixed 0..4e-5 over 286 px: 286 / 50 = 5.7 ticks, 4e-5 / 5.7 = 7e-6 rounds up to 1e-5: 0, 1e-5 ... 4e-5.
  LineChart c = fixed_square(series({1, 2}, {1e-5, 3e-5}));
  c.y.max = 4e-5;
  const std::string svg = render(c);
  for (const char* label : {">0<", ">1e-5<", ">2e-5<", ">4e-5<"}) CHECK(svg.find(label) != std::string::npos);
}

TEST_CASE("a long legend stops at the rows that leave the frame room, and counts the rest") {
  // 40 names of 16 characters: each entry 22 + 6.5 x 16 + 14 = 140 px, so 4 fit from x = 72 before 696;
  // 380 px leave (380 - 32 - 12 - 50 - 120) / 18 = 9 rows: 36 entries shown, "+4 more".
  LineChart c;
  c.title = "many";
  for (int i = 10; i < 50; ++i) c.series.push_back(series({1, 2}, {1, static_cast<double>(i)}));
  for (std::size_t i = 0; i < c.series.size(); ++i) c.series[i].name = "series number " + std::to_string(i + 10);
  const std::string svg = render(c);
  CHECK(svg.find(">+4 more</text>") != std::string::npos);
  CHECK(svg.find(">series number 45</text>") != std::string::npos);
  CHECK(svg.find(">series number 46</text>") == std::string::npos);
  CHECK(data_marks(svg) == 40);
}

TEST_CASE("axis titles carry their units; reference markers are dashed lines with their labels") {
  // An x marker at 5 on 0..10: x = 72 + 624 / 2 = 384, top to bottom. A y marker at 8: y = 330 - 0.8 x 286 = 101.2.
  // A marker at 20, outside the fixed range, is not drawn.
  LineChart c = fixed_square(series({1, 2}, {3, 4}));
  c.x.label = "checkpoint interval";
  c.x.unit = "min";
  c.x_markers = {{"Young/Daly", 5}, {"far away", 20}};
  c.y_markers = {{"capacity 80 GiB", 8}};
  const std::string svg = render(c);
  CHECK(svg.find(">checkpoint interval (min)</text>") != std::string::npos);
  CHECK(svg.find("d=\"M384,44V330\" fill=\"none\" stroke=\"#555\" stroke-width=\"1.5\" stroke-dasharray") != std::string::npos);
  CHECK(svg.find("d=\"M72,101.2H696\" fill=\"none\" stroke=\"#555\" stroke-width=\"1.5\" stroke-dasharray") != std::string::npos);
  CHECK(svg.find(">Young/Daly</text>") != std::string::npos);
  CHECK(svg.find(">capacity 80 GiB</text>") != std::string::npos);
  CHECK(svg.find("far away") == std::string::npos);
  CHECK(data_marks(svg) == 1);  // markers are not data marks
}

TEST_CASE("an auto range widens to show a marker") {
  // Bars up to 60 with capacity 80 marked: the range reaches 80, so the marker is drawn.
  BarChart c;
  c.title = "memory";
  c.categories = {"stage 0", "stage 1"};
  c.segments = {{"total", {50, 60}, {}}};
  c.y_markers = {{"capacity", 80}};
  CHECK(render(c).find(">capacity</text>") != std::string::npos);
}

TEST_CASE("a legend appears for two or more series, and always for bar segments") {
  CHECK(render(fixed_square(series({1, 2}, {3, 4}))).find("class=\"legend\"") == std::string::npos);
  const std::string three = render(three_series_with_points());
  CHECK(three.find("class=\"legend\"") != std::string::npos);
  CHECK(three.find(">d</text>") != std::string::npos);
  BarChart one_segment = stacked_one_two();
  one_segment.segments.resize(1);
  CHECK(render(one_segment).find(">weights</text>") != std::string::npos);
}

TEST_CASE("print-friendly: strokes at least 1.5 wide, fonts at least 11 px, system fonts") {
  LineChart c = three_series_with_points();
  c.series[1].highlight = true;
  c.series[2].dashed = true;
  c.y_markers = {{"limit", 5}};
  for (const std::string& svg : {render(c), render(stacked_one_two())}) {
    const std::regex stroke(" stroke-width=\"([0-9.]+)\""), font(" font-size=\"([0-9.]+)\"");
    int strokes = 0;
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), stroke); it != std::sregex_iterator(); ++it, ++strokes)
      CHECK(std::stod((*it)[1]) >= 1.5);
    CHECK(strokes > 0);
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), font); it != std::sregex_iterator(); ++it)
      CHECK(std::stod((*it)[1]) >= 11);
    CHECK(svg.find("font-family=\"system-ui, sans-serif\"") != std::string::npos);
    CHECK(well_formed(svg));
  }
}

TEST_CASE("equal inputs built apart render to the same bytes (no addresses, clocks or random ids in the SVG)") {
  LineChart c = three_series_with_points();
  c.series[0].step = true;
  c.x_markers = {{"m", 2.5}};
  LineChart copy = three_series_with_points();
  copy.series[0].step = true;
  copy.x_markers = {{"m", 2.5}};
  CHECK(render(c) == render(copy));
  BarChart b = stacked_one_two();
  b.segments[0].tips = {"a < b"};
  const BarChart bar_copy = b;
  CHECK(render(b) == render(bar_copy));
}

TEST_CASE("the palette cycles through eight Okabe-Ito colours") {
  CHECK(std::string(palette(0)) == "#0072B2");
  CHECK(std::string(palette(8)) == palette(0));
  CHECK(std::string(palette(1)) != palette(0));
}

TEST_CASE("bar categories: every name shown, on two lines where one is too wide; thinned only when two lines overlap") {
  // The estimate page's step parts on a 720-pixel chart: 7 bands of 89 px. "grad norm, clip, zero" (21 characters)
  // is wider than its band on one line and fits on two.
  BarChart c;
  c.title = "step time by part";
  c.categories = {"compute", "host", "recompute", "tp comm", "dp comm", "optimizer", "grad norm, clip, zero"};
  c.segments = {{"seconds", {3, 0.1, 0.5, 0.2, 0.03, 0.01, 0.007}, {}}};
  const std::string svg = render(c);
  const std::string visible = std::regex_replace(svg, std::regex("<[^>]*>"), "");
  for (const std::string& name : c.categories) CHECK_MESSAGE(visible.find(name) != std::string::npos, name);
  CHECK(svg.find(">grad norm, </tspan>") != std::string::npos);  // the first of its two lines
  // 60 long names cannot share 624 pixels even on two lines: every m-th one, none overlapping.
  BarChart many;
  many.title = "many";
  for (int i = 0; i < 60; ++i) many.categories.push_back("category number " + std::to_string(i));
  many.segments = {{"v", std::vector<double>(60, 1.0), {}}};
  const std::string crowded = render(many);
  int labels = 0;
  for (std::size_t at = crowded.find(">category number "); at != std::string::npos; at = crowded.find(">category number ", at + 1)) ++labels;
  CHECK(labels > 1);
  CHECK(labels < 60);
}

TEST_CASE("given x ticks: exactly the GPU counts searched, not the decades around them") {
  // A plan over 8, 16, 32 and 64 GPUs on a log axis: ticks at those counts (nice ticks would be 1, 2, 5, ... 100).
  LineChart c;
  c.title = "time to train";
  c.x = {"GPUs", "count", true};
  c.x_ticks = {8, 16, 32, 64};
  c.series = {series({8, 16, 32, 64}, {4, 2, 1, 0.5})};
  const std::string svg = render(c);
  for (const char* tick : {">8</text>", ">16</text>", ">32</text>", ">64</text>"}) CHECK_MESSAGE(svg.find(tick) != std::string::npos, tick);
  CHECK(svg.find(">100</text>") == std::string::npos);
  CHECK(svg.find(">10</text>") == std::string::npos);
}

TEST_CASE("a timeline draws a bar per span on its row, coloured by category, and drops what it cannot place") {
  TimelineChart c;
  c.title = "Timeline";
  c.x = {"time", "s", false, 0, 2};
  c.row_label = "GPU";
  c.rows = {"GPU 0", "GPU 8"};
  c.categories = {"compute", "pp"};
  c.spans = {{0, 0, 1, 0, "forward"}, {1, 1, 1, 1, "recv"}, {1, 0.5, 0.25, 5, "no such category"}, {2, 0, 1, 0, "no such row"}};
  const std::string svg = render(c);
  // 720 x 260 with one legend row: the frame runs x 72..696 and y 32 + 18 + 12 = 62 .. 260 - 50 = 210, two rows of
  // 74 px; a bar fills 70% of its row from 15% down. Time 0..2 s over 624 px: 312 px a second.
  CHECK(data_marks(svg) == 2);
  const auto rects = mark_tags(svg, "rect");
  REQUIRE(rects.size() == 2);
  CHECK(std::stod(attribute(rects[0], "x")) == approx(72));
  CHECK(std::stod(attribute(rects[0], "width")) == approx(312));
  CHECK(std::stod(attribute(rects[1], "x")) == approx(384));
  CHECK(std::stod(attribute(rects[1], "y")) == approx(62 + 74 + 0.15 * 74).epsilon(0.01));
  CHECK(std::stod(attribute(rects[1], "height")) == approx(0.7 * 74).epsilon(0.01));
  CHECK(attribute(rects[0], "fill") != attribute(rects[1], "fill"));
  CHECK(count(svg, ">GPU 8<") == 1);    // the row names
  CHECK(count(svg, ">compute<") == 1);  // the legend
  CHECK(count(svg, ">time (s)<") == 1);
  c.spans.clear();
  CHECK(count(render(c), "no data") >= 1);
}
