#include "run_files.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <vector>

#include "models/core/errors.hpp"

namespace trainsim::cli {

namespace fs = std::filesystem;

namespace {

std::vector<std::string>& inputs() {
  static std::vector<std::string> noted;
  return noted;
}

// Outputs by their absolute, normalised path, and the flag that writes each: two flags naming one file would
// leave only the second.
std::map<std::string, std::string>& claimed_outputs() {
  static std::map<std::string, std::string> claimed;
  return claimed;
}

std::string quoted(const std::string& path) { return "\"" + path + "\""; }

std::string reason(int error) { return error ? std::strerror(error) : "a write failed"; }

// The temporary file being written, for the signal handler: Ctrl-C or a kill during a long run (a simulation
// streams its timeline into the temporary) leaves no hidden partial file behind. Only unlink(2) and raise(3),
// which are async-signal-safe, run in the handler.
char g_temp_path[4096];

extern "C" void remove_temp_and_stop(int sig) {
  if (g_temp_path[0] != '\0') ::unlink(g_temp_path);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void track_temp(const std::string& temp) {
  if (temp.size() >= sizeof g_temp_path) return;  // too long to keep: left behind on a signal, as before
  std::memcpy(g_temp_path, temp.c_str(), temp.size() + 1);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, remove_temp_and_stop);
}

void untrack_temp() { g_temp_path[0] = '\0'; }

// The mode a new file gets from open(2) with 0666: what the user's umask allows.
mode_t new_file_mode() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

}  // namespace

void forget_run_files() {
  inputs().clear();
  claimed_outputs().clear();
}

void note_input_file(const std::string& path) {
  if (!path.empty()) inputs().push_back(path);
}

std::ifstream open_input_file(const std::string& flag, const std::string& path, const std::string& what) {
  std::error_code ec;
  if (path.empty()) throw InputError(flag, "an empty path", what);
  if (fs::is_directory(path, ec)) throw InputError(flag, quoted(path), what, "that is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(flag, quoted(path), what, fs::exists(path, ec) ? "it cannot be read" : "no such file");
  note_input_file(path);
  return in;
}

void check_output_path(const std::string& flag, const std::string& path) {
  if (path.empty()) throw InputError(flag, "an empty path", "a file to write");
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (fs::is_directory(status)) throw InputError(flag, quoted(path), "a file to write", "that is a directory");
  if (fs::exists(status))
    for (const std::string& input : inputs())
      if (fs::equivalent(input, path, ec))
        throw InputError(flag, quoted(path), "a file other than the run's inputs", "it is the input " + quoted(input) + ", which writing would destroy");
  if (fs::exists(status) && !fs::is_regular_file(status)) return;  // a device or a pipe: opened when written
  const std::string key = fs::weakly_canonical(fs::absolute(path), ec).string();
  const auto [it, fresh] = claimed_outputs().emplace(key, flag);
  if (!fresh && it->second != flag)
    throw InputError(flag, quoted(path), "a file no other option writes", it->second + " writes it too, and only one of them would be kept");
  fs::path folder = fs::path(path).parent_path();
  if (folder.empty()) folder = ".";
  if (!fs::is_directory(folder, ec)) throw InputError(flag, quoted(path), "a file in an existing folder", "no folder " + quoted(folder.string()));
  if (::access(folder.c_str(), W_OK) != 0) throw InputError(flag, quoted(path), "a file in a folder that can be written", reason(errno));
}

void write_output_file(const std::string& flag, const std::string& path, const std::function<void(std::ostream&)>& write) {
  check_output_path(flag, path);
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (fs::exists(status) && !fs::is_regular_file(status)) {
    std::ofstream out(path, std::ios::binary);
    if (!out) throw InputError(flag, quoted(path), "a file that can be written", reason(errno));
    errno = 0;
    write(out);
    out.close();
    if (!out) throw OutputError("could not write " + path + " (" + flag + "): " + reason(errno));
    return;
  }
  // The temporary file: hidden, beside the target (the same file system, so the rename is atomic), with the
  // target's mode when it exists. A symbolic link is written through: the file it names is replaced, the link kept.
  const fs::path target = fs::is_symlink(path, ec) ? fs::weakly_canonical(path, ec) : fs::path(path);
  std::string temp = (target.parent_path() / ("." + target.filename().string() + ".XXXXXX")).string();
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) throw InputError(flag, quoted(path), "a file in a folder that can be written", reason(errno));
  struct stat old {};
  ::fchmod(fd, ::stat(target.c_str(), &old) == 0 ? old.st_mode & 07777 : new_file_mode());
  ::close(fd);
  track_temp(temp);
  auto discard = [&] {
    std::remove(temp.c_str());
    untrack_temp();
  };
  auto fail = [&](int error) {
    discard();
    throw OutputError("could not write " + path + " (" + flag + "): " + reason(error));
  };
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    errno = 0;
    try {
      if (out) write(out);
    } catch (...) {
      out.close();
      discard();
      throw;
    }
    out.close();
    if (!out) fail(errno);
  }
  if (std::rename(temp.c_str(), target.c_str()) != 0) fail(errno);
  untrack_temp();
}

CLI::Validator non_empty_path() {
  return CLI::Validator([](std::string& value) { return value.empty() ? std::string("got an empty path; expected a file name") : std::string(); }, "PATH");
}

void check_standard_output() {
  // The reason is known when the last flush is the one that fails; an earlier failure (the buffer filled mid-run)
  // has left errno to later calls, and the message then says only that a write failed.
  errno = 0;
  std::cout.flush();
  const bool failed = !std::cout || std::fflush(stdout) != 0 || std::ferror(stdout);
  if (failed) throw OutputError("could not write standard output: " + reason(errno));
}

}  // namespace trainsim::cli
