#pragma once
// A progress bar on stderr, drawn only when stderr is a terminal (scripts and CI see nothing).
#include <string>

namespace trainsim::cli {

class ProgressBar {
 public:
  explicit ProgressBar(std::string label);
  ~ProgressBar();
  void update(double fraction);  // 0..1
  // Erases the bar: call before printing the result, so no bar is left above or inside it.
  void finish();

 private:
  std::string label_;
  bool enabled_;
  int last_percent_ = -1;
};

}  // namespace trainsim::cli
