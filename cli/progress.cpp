#include "progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "models/core/units.hpp"

namespace trainsim::cli {

namespace {
bool g_bars_on = true;
}  // namespace

void set_progress_bars(bool on) { g_bars_on = on; }

ProgressBar::ProgressBar(std::string label) : label_(std::move(label)), enabled_(g_bars_on && isatty(fileno(stderr)) != 0) {}

ProgressBar::~ProgressBar() { finish(); }

void ProgressBar::finish() {
  if (enabled_ && last_percent_ >= 0) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }
  last_percent_ = -1;
  enabled_ = false;  // nothing more is drawn
}

void ProgressBar::update(double fraction) {
  if (!enabled_) return;
  const double done = std::clamp(fraction, 0.0, 1.0);
  const int percent = static_cast<int>(done * 100);
  const Clock::time_point now = Clock::now();
  if (percent == last_percent_ && now - last_draw_ < std::chrono::milliseconds(500)) return;
  last_percent_ = percent;
  last_draw_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  std::string times;
  if (elapsed >= 1) {
    times = "  " + format_seconds(elapsed);
    if (done >= 0.01 && done < 1) times += ", about " + format_seconds(elapsed * (1 - done) / done) + " left";
  }
  const int width = 30, filled = percent * width / 100;
  std::fprintf(stderr, "\r%s [%s%s] %3d%%%s\033[K", label_.c_str(), std::string(filled, '#').c_str(), std::string(width - filled, ' ').c_str(), percent,
               times.c_str());
  std::fflush(stderr);
}

}  // namespace trainsim::cli
