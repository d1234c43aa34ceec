#pragma once
// Renderers of `trainsim reliability`: the terminal table, JSON (contract keys ettr, interruptions,
// lost_gpu_hours, wall_s as {mean, stddev, p05, p50, p95, ci95, n}; interval_sweep[], what_if[],
// sensitivity[], frontier) and CSV (one row per simulated variant), and the table cells the Markdown and
// HTML documents (reliability_document.hpp) share with the terminal table. They format what the command
// computed; they simulate nothing.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "models/scenario/scenario.hpp"
#include "sim/reliability/job_setup.hpp"
#include "sim/reliability/reliability_study.hpp"

namespace trainsim {

struct ReliabilityReport {
  std::string label;
  Scenario scenario;
  sim::ReliabilityJob job;
  std::vector<std::string> notes;
  int runs = 0, threads = 1;
  std::uint64_t seed = 1;
  double seconds = 0;
  sim::StudyRow base;
  sim::IntervalSweep sweep;
  std::vector<sim::StudyRow> what_if;
  std::vector<sim::SensitivityRow> sensitivity;
  std::vector<sim::FrontierPoint> frontier;
  // Where mean ETTR falls through 90% along the frontier (sim::frontier_crossing_s: negative when it never
  // does, 0 when it is below at every cost shown), with the recovery as configured and with instant recovery.
  double frontier_cost_for_ettr_90_s = -1, frontier_cost_for_ettr_90_instant_s = -1;
  sim::LostTimeDistribution lost_time;
  bool brief = false, has_frontier = false;
  bool window_mode = false;  // the window, not the work, ends most runs: report training done, not time to train
};

// What the numbers cannot say themselves: values left out (null, "-", "n/a") and runs cut short, added to r->notes.
void add_reliability_output_notes(ReliabilityReport* r);

nlohmann::json reliability_json(const ReliabilityReport& r);
void print_reliability_table(std::ostream& os, const ReliabilityReport& r);
void print_reliability_csv(std::ostream& os, const ReliabilityReport& r);

// ---- The cells the terminal table, Markdown and HTML share ------------------------------------------------

// One line of the summary at the top ("Job", "llama3.1-405b pretrain, 16384 x ..."); `continues`: the terminal
// prints it under the line before, without its label.
struct ReliabilityFact {
  std::string label;
  std::string text;
  bool continues = false;
};
std::vector<ReliabilityFact> reliability_facts(const ReliabilityReport& r);

// A titled table: the title, the column header, the rows of cells, which columns hold numbers.
struct ReliabilityTable {
  std::string title;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> numeric;
};
ReliabilityTable reliability_result_table(const ReliabilityReport& r);       // mean, CI, p05, p95 of the headline metrics
ReliabilityTable reliability_interval_table(const ReliabilityReport& r);     // the checkpoint-interval sweep
ReliabilityTable reliability_what_if_table(const ReliabilityReport& r);      // empty rows under --brief
ReliabilityTable reliability_sensitivity_table(const ReliabilityReport& r);  // empty rows under --brief
ReliabilityTable reliability_frontier_table(const ReliabilityReport& r);     // empty rows without --frontier

// The sentences under the result table: lost work per crash and job cost; where the time goes; the closed forms
// (two lines); the best interval by simulation; the frontier's 90% crossing. Empty where the table has none.
std::string reliability_result_note(const ReliabilityReport& r);
std::string reliability_time_shares(const ReliabilityReport& r);
std::vector<std::string> reliability_closed_forms(const ReliabilityReport& r);
std::string reliability_best_interval(const ReliabilityReport& r);
std::string reliability_frontier_note(const ReliabilityReport& r);

// The wall clock of a study row split into its parts, seconds (means per run). `shrunk` (elastic): running on
// fewer nodes, the lost speed only; what remains of the wall time after the other parts.
struct TimeShares {
  double wall = 0, kept = 0, checkpoint = 0, rework = 0, recovery = 0, wait = 0, reconfigure = 0, shrunk = 0;
};
TimeShares time_shares(const sim::JobStatistics& st);

}  // namespace trainsim
