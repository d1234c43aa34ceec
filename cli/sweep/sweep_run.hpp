#pragma once
// Running a sweep's points and keeping them in its output folder:
//   DIR/sweep.json             the sweep file as read, its fingerprint and point count (written once; a folder holds
//                              one sweep, and a different one is refused)
//   DIR/points/NNNNNN.json     one per finished point: its index, inputs, seed, arguments, exit code, and the
//                              command's JSON result or its error; written to a temporary file and renamed, so a
//                              killed shard leaves whole files only and a rerun skips what is there
//   DIR/files/NNNNNN/          what an export point writes
// Each point runs in this process (the command as `trainsim COMMAND ARGS...` would run it, its output captured), so
// a point costs the command itself and not a process start.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sweep_spec.hpp"

namespace trainsim::cli::sweep {

struct Outcome {
  int exit_code = 0;
  std::string output;  // what the command printed
  std::string error;   // its error message (exit code not 0)
};

// Runs `trainsim COMMAND ARGS...` in this process, capturing standard output and error.
Outcome run_command(const std::string& command, const std::vector<std::string>& args);
// The same in a child process (fork): for a command that runs once per process (simulate: one SimGrid engine a
// process); a child killed by a signal is a failed point, not a lost shard.
Outcome run_command_in_child(const std::string& command, const std::vector<std::string>& args);

// The point's record as DIR/points holds it.
nlohmann::json point_record(const Spec& spec, const Point& point, const Outcome& outcome);

class Folder {
 public:
  explicit Folder(std::string dir) : dir_(std::move(dir)) {}
  const std::string& dir() const { return dir_; }
  // Creates the folder for `spec` (or checks it holds the same sweep); InputError under `flag` otherwise.
  void prepare(const Spec& spec, const std::string& flag) const;
  // The record of sweep.json; InputError when the folder holds no sweep.
  nlohmann::json header(const std::string& flag) const;
  std::string point_path(std::size_t index) const;
  std::string files_path(std::size_t index) const;
  // The point's record, if its file is there.
  std::optional<nlohmann::json> read_point(std::size_t index) const;
  void write_point(std::size_t index, const nlohmann::json& record) const;

 private:
  std::string dir_;
};

struct ShardSummary {
  std::size_t points = 0, run = 0, skipped = 0, failed = 0;
  double seconds = 0;          // the whole shard
  double command_seconds = 0;  // inside the commands themselves; the rest is the sweep's own (records, files)
};

// Runs the points of shard `shard` of `shards` that the folder does not hold yet (and those that failed, with
// `retry_failed`).
ShardSummary run_shard(const Spec& spec, const Folder& folder, std::size_t shard, std::size_t shards, bool retry_failed);

}  // namespace trainsim::cli::sweep
