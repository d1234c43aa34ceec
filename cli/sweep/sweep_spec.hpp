#pragma once
// A sweep file (SWEEP.json): one trainsim command run at every point of a grid of axes.
//   {"command": "estimate",                     estimate, plan, simulate, cluster, reliability or export
//    "scenario": "base.json",                   optional, relative to the sweep file
//    "args": ["--framework", "megatron-core"],   optional, given at every point
//    "axes": [                                   the grid: the product of the axes, the last one fastest
//      {"name": "gpu", "path": "/hardware/gpu", "values": ["h100-sxm-80gb", "a100-sxm-80gb"]},   a scenario field
//      {"name": "gpus", "flag": "--gpus", "range": {"from": 8, "to": 64, "times": 2}},         a flag (range: step or times)
//      {"name": "case", "scenario": ["a.json", "b.json"]},                                     scenario files
//      {"zip": [axis, axis, ...]}],                                                           axes that move together
//    "seed": 1, "seed_per_point": false,         commands that take --seed: this one everywhere (common random
//                                                 numbers), or seed + point index
//    "columns": {"step_s": "/step/time_s"},      what the merged table keeps of each point's JSON (default: per command)
//    "charts": ["step_s"]}                       the columns the HTML report draws (default: per command)
// Points are numbered 0..count-1 in that order, each with its inputs (axis name -> value), its seed and the exact
// arguments it runs with, so a point can be rerun by hand.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace trainsim::cli::sweep {

struct Axis {
  std::string name;
  enum class Kind { Path, Flag, Scenario } kind = Kind::Path;
  std::string target;                // the JSON pointer or the flag
  std::vector<nlohmann::json> values;
};

struct Point {
  std::size_t index = 0;
  nlohmann::json inputs = nlohmann::json::object();  // axis name -> value, in axis order
  std::optional<std::uint64_t> seed;                  // for commands that take --seed
  std::vector<std::string> args;                      // after the command name
};

struct Spec {
  std::string file;       // the sweep file as given
  std::string command;
  std::string scenario;   // resolved against the sweep file's folder; empty: the command's default
  std::vector<std::string> args;
  std::vector<std::vector<Axis>> axes;  // each group moves together (one axis, or a zip)
  std::uint64_t seed = 1;
  bool seed_per_point = false;
  std::vector<std::pair<std::string, std::string>> columns;  // name -> JSON pointer into the point's result
  std::vector<std::string> charts;  // columns the HTML report draws (default: per command)
  nlohmann::json document;  // the file as read, for the output folder's record

  std::size_t count() const;
  Point point(std::size_t index) const;
  // Whether the command takes --seed.
  bool seeded() const;
  // Whether each point needs a process of its own (simulate: SimGrid runs one engine per process).
  bool isolated() const { return command == "simulate"; }
  // A fingerprint of what the points run (the document, resolved paths included): a folder holds one sweep.
  std::string fingerprint() const;
};

// The commands a sweep may run, and the columns each keeps by default.
const std::vector<std::string>& sweep_commands();

// Reads and checks SWEEP.json; InputError naming the JSON path, the value and what was expected.
Spec read_spec(const std::string& path);
Spec parse_spec(const nlohmann::json& doc, const std::string& path);

// The points a shard runs: index % shards == shard ("I/N", 0 <= I < N), so every shard gets points from all over
// the grid. Throws InputError naming `flag` for a malformed value.
std::pair<std::size_t, std::size_t> parse_shard(const std::string& text, const std::string& flag);

}  // namespace trainsim::cli::sweep
