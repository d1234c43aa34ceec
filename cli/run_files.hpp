#pragma once
// The files a run reads and writes, through one mechanism:
//  - inputs are noted as they are read, and an output that is the same file as an input (by device and inode, so
//    through links and "./" spellings too) is refused with exit 2 before anything is written: it would be lost;
//  - an output is written to a temporary file beside it and renamed over it only when every byte is written, so
//    a failed or interrupted run leaves the old file as it was (devices and pipes, /dev/stdout, are written
//    directly);
//  - a write that fails (a full disk, /dev/full) is an OutputError: exit 1 naming the path and the reason, as is
//    a failed write to standard output (check_standard_output, once the command is done).
#include <CLI/CLI.hpp>
#include <fstream>
#include <functional>
#include <ostream>
#include <stdexcept>
#include <string>

namespace trainsim::cli {

class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Opens `path` for reading and notes it as an input. InputError under `flag` when it is missing, a folder or
// unreadable; `what` says what was expected ("a readable nccl-tests output file").
std::ifstream open_input_file(const std::string& flag, const std::string& path, const std::string& what);
// Notes a file that another reader opens (a scenario, a calibration profile, a trace read by its importer).
void note_input_file(const std::string& path);

// InputError under `flag` when `path` is empty, a folder, in a folder that does not exist or cannot be written, or
// the same file as an input noted so far. Commands call it for each output before their run starts.
void check_output_path(const std::string& flag, const std::string& path);
// check_output_path, then `write` into a temporary file renamed to `path` once it is complete.
void write_output_file(const std::string& flag, const std::string& path, const std::function<void(std::ostream&)>& write);

// For every option that names a file or folder: an empty value is an error (exit 2), never "not given".
CLI::Validator non_empty_path();

// Forgets the inputs noted and the outputs claimed: a new run in the same process (a sweep's next point).
void forget_run_files();

// Flushes standard output; OutputError when any write to it failed.
void check_standard_output();

}  // namespace trainsim::cli
