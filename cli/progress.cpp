#include "progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace trainsim::cli {

ProgressBar::ProgressBar(std::string label) : label_(std::move(label)), enabled_(isatty(fileno(stderr)) != 0) {}

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
  const int percent = static_cast<int>(std::clamp(fraction, 0.0, 1.0) * 100);
  if (percent == last_percent_) return;
  last_percent_ = percent;
  const int width = 30, filled = percent * width / 100;
  std::fprintf(stderr, "\r%s [%s%s] %3d%%", label_.c_str(), std::string(filled, '#').c_str(), std::string(width - filled, ' ').c_str(), percent);
  std::fflush(stderr);
}

}  // namespace trainsim::cli
