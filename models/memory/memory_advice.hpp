#pragma once
// "Which knob would make it fit": single changes to the training setup or layout, each re-evaluated
// with the memory model, keeping the GPU count unless the change says otherwise.
#include <string>
#include <vector>

#include "models/scenario/spec.hpp"

namespace trainsim {

struct FitSuggestion {
  std::string change;     // e.g. "recompute=selective", "tp=4 (dp=2)"
  double total_bytes = 0; // most loaded GPU after the change
  bool fits = false;
};

// Every single-knob change that is a valid layout, in order of how little it usually costs in
// throughput; the caller shows the ones that fit (or, when none does, the closest).
std::vector<FitSuggestion> fit_suggestions(const Scenario& s);

}  // namespace trainsim
