#include "sweep_run.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <system_error>

#include "cli/command.hpp"
#include "cli/progress.hpp"
#include "cli/run_files.hpp"
#include "cli/scenario_input.hpp"
#include "models/core/errors.hpp"
#include "models/core/json_reader.hpp"

namespace trainsim::cli::sweep {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

// Standard output and error sent to strings while a point runs, put back however it ends.
class Capture {
 public:
  Capture() : out_(std::cout.rdbuf(out_text_.rdbuf())), err_(std::cerr.rdbuf(err_text_.rdbuf())) { set_progress_bars(false); }
  ~Capture() {
    std::cout.rdbuf(out_);
    std::cerr.rdbuf(err_);
    set_progress_bars(true);
  }
  std::string out() const { return out_text_.str(); }
  std::string err() const { return err_text_.str(); }

 private:
  std::ostringstream out_text_, err_text_;
  std::streambuf *out_, *err_;
};

std::string digits(std::size_t index) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%06zu", index);
  return buf;
}

}  // namespace

Outcome run_command(const std::string& command, const std::vector<std::string>& args) {
  Outcome o;
  const Command* cmd = command_registry().find(command);
  if (!cmd) {
    o.exit_code = kExitBadInput;
    o.error = "no command " + command;
    return o;
  }
  forget_run_files();
  Capture capture;
  try {
    CLI::App app{"trainsim " + command};
    const std::function<int()> action = cmd->setup(app);
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 reads the vector from its end
    app.parse(reversed);
    o.exit_code = action();
  } catch (const CLI::ParseError& e) {
    o.exit_code = kExitBadInput;
    o.error = e.what();
  } catch (const InputError& e) {
    o.exit_code = kExitBadInput;
    o.error = e.what();
  } catch (const std::exception& e) {
    o.exit_code = kExitInternal;
    o.error = std::string("internal error: ") + e.what();
  }
  o.output = capture.out();
  if (o.exit_code != 0 && o.error.empty()) o.error = capture.err();
  return o;
}

Outcome run_command_in_child(const std::string& command, const std::vector<std::string>& args) {
  int fds[2];
  if (::pipe(fds) != 0) return {kExitInternal, "", std::string("internal error: pipe: ") + std::strerror(errno)};
  std::cout.flush();
  std::cerr.flush();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return {kExitInternal, "", std::string("internal error: fork: ") + std::strerror(errno)};
  }
  if (pid == 0) {
    ::close(fds[0]);
    const Outcome o = run_command(command, args);
    const std::string text = Json{{"exit_code", o.exit_code}, {"output", o.output}, {"error", o.error}}.dump(-1, ' ', false, Json::error_handler_t::replace);
    for (std::size_t done = 0; done < text.size();) {
      const ssize_t n = ::write(fds[1], text.data() + done, text.size() - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    ::_exit(0);  // no exit handlers: the child's engines and files are the parent's business no more
  }
  ::close(fds[1]);
  std::string text;
  char buf[65536];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) return {kExitInternal, "", "internal error: the point's process was killed by signal " + std::to_string(WTERMSIG(status))};
  const Json r = Json::parse(text, nullptr, false);
  if (r.is_discarded() || !r.is_object()) return {kExitInternal, "", "internal error: the point's process gave no result"};
  return {r.value("exit_code", kExitInternal), r.value("output", std::string()), r.value("error", std::string())};
}

Json point_record(const Spec& spec, const Point& point, const Outcome& outcome) {
  Json r;
  r["index"] = point.index;
  r["inputs"] = point.inputs;
  r["seed"] = point.seed ? Json(*point.seed) : Json();
  Json args = Json::array({"trainsim", spec.command});
  for (const std::string& a : point.args) args.push_back(a);
  r["args"] = args;
  r["exit_code"] = outcome.exit_code;
  if (outcome.exit_code != 0) {
    r["error"] = outcome.error;
  } else if (spec.command == "export") {
    r["result"] = Json{{"output", outcome.output}};
  } else {
    Json result = Json::parse(outcome.output, nullptr, false);
    if (result.is_discarded()) {
      r["exit_code"] = kExitInternal;
      r["error"] = "the command's output is not JSON";
    } else {
      r["result"] = std::move(result);
    }
  }
  return r;
}

void Folder::prepare(const Spec& spec, const std::string& flag) const {
  std::error_code ec;
  fs::create_directories(fs::path(dir_) / "points", ec);
  if (ec || !fs::is_directory(fs::path(dir_) / "points")) throw InputError(flag, "\"" + dir_ + "\"", "a folder that can be created and written", ec.message());
  const std::string header_path = (fs::path(dir_) / "sweep.json").string();
  const Json want = {{"sweep", spec.file}, {"fingerprint", spec.fingerprint()}, {"command", spec.command}, {"points", spec.count()},
                     {"document", spec.document}};
  if (fs::exists(header_path)) {
    const Json have = header(flag);
    if (have.value("fingerprint", std::string()) != spec.fingerprint())
      throw InputError(flag, "\"" + dir_ + "\"", "a folder for this sweep (or a new one)",
                       "it holds another sweep (" + have.value("sweep", std::string("?")) + ", fingerprint " + have.value("fingerprint", std::string("?")) +
                           "; this one is " + spec.fingerprint() + ")");
    return;
  }
  write_output_file(flag, header_path, [&](std::ostream& os) { os << want.dump(2) << "\n"; });
}

Json Folder::header(const std::string& flag) const {
  const std::string path = (fs::path(dir_) / "sweep.json").string();
  if (!fs::is_regular_file(path)) throw InputError(flag, "\"" + dir_ + "\"", "a sweep's output folder (with sweep.json)", "no " + path);
  const Json h = read_json_file(path, flag);
  if (!h.is_object() || !h.contains("points") || !h["points"].is_number_unsigned() || !h.contains("document"))
    throw InputError(flag, "\"" + path + "\"", "the sweep.json that trainsim sweep writes");
  return h;
}

std::string Folder::point_path(std::size_t index) const { return (fs::path(dir_) / "points" / (digits(index) + ".json")).string(); }
std::string Folder::files_path(std::size_t index) const { return (fs::path(dir_) / "files" / digits(index)).string(); }

std::optional<Json> Folder::read_point(std::size_t index) const {
  std::ifstream in(point_path(index), std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  Json r = Json::parse(ss.str(), nullptr, false);
  if (r.is_discarded() || !r.is_object() || !r.contains("exit_code")) return std::nullopt;  // not one of ours: run it again
  return r;
}

// A temporary beside the file, renamed once complete (run_files.hpp): a killed shard leaves whole points only, and
// shards starting at once never share a temporary.
void Folder::write_point(std::size_t index, const Json& record) const {
  write_output_file("--out", point_path(index), [&](std::ostream& os) { os << record.dump(1) << "\n"; });
}

ShardSummary run_shard(const Spec& spec, const Folder& folder, std::size_t shard, std::size_t shards, bool retry_failed) {
  ShardSummary s;
  const auto start = std::chrono::steady_clock::now();
  const std::size_t count = spec.count();
  ProgressBar bar("sweep " + std::to_string(shard) + "/" + std::to_string(shards));
  const std::size_t mine = count > shard ? (count - shard + shards - 1) / shards : 0;
  for (std::size_t i = shard; i < count; i += shards) {
    ++s.points;
    if (const auto have = folder.read_point(i); have && (!retry_failed || (*have)["exit_code"] == 0)) {
      ++s.skipped;
    } else {
      Point p = spec.point(i);
      if (spec.command == "export") p.args.insert(p.args.end(), {"-o", folder.files_path(i)});
      const auto t0 = std::chrono::steady_clock::now();
      const Outcome o = spec.isolated() ? run_command_in_child(spec.command, p.args) : run_command(spec.command, p.args);
      s.command_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const Json record = point_record(spec, p, o);
      folder.write_point(i, record);
      ++s.run;
      if (record["exit_code"] != 0) ++s.failed;
    }
    bar.update(static_cast<double>(s.points) / static_cast<double>(std::max<std::size_t>(1, mine)));
  }
  bar.finish();
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return s;
}

}  // namespace trainsim::cli::sweep
