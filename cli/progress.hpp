#pragma once
// A progress bar on stderr, drawn only when stderr is a terminal (scripts and CI see nothing). Past a second it
// shows the time spent and, from 1% on, the time left at the pace so far: a long run says how long it will take.
#include <chrono>
#include <string>

namespace trainsim::cli {

// Whether bars are drawn at all (on by default): a sweep turns its points' own bars off and draws its own.
void set_progress_bars(bool on);

class ProgressBar {
 public:
  explicit ProgressBar(std::string label);
  ~ProgressBar();
  void update(double fraction);  // 0..1; redrawn when the percent changes or half a second has passed
  // Erases the bar: call before printing the result, so no bar is left above or inside it.
  void finish();

 private:
  using Clock = std::chrono::steady_clock;
  std::string label_;
  bool enabled_;
  int last_percent_ = -1;
  Clock::time_point start_ = Clock::now(), last_draw_ = start_;
};

}  // namespace trainsim::cli
