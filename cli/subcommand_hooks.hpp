#pragma once
// Subcommands that other files add to an existing command, e.g. `calibrate run` and `validate run` from the CUDA
// build (cli/calibrate_run.cpp, cli/validate_run.cpp, compiled only when TRAINSIM_CUDA is on). Such a file
// registers an extension for its parent command by name (an anonymous-namespace RegisterSubcommand), and the
// parent's setup adds whatever is registered for it. The parent never names its extensions, so a build without
// them compiles and behaves as before.
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace trainsim::cli {

struct SubcommandExtension {
  std::string parent;       // the command it extends: "calibrate", "validate"
  std::string name;         // "run"
  std::string description;
  // Adds the subcommand's options to `sub` and returns what to run when it is chosen.
  std::function<std::function<int()>(CLI::App& sub)> setup;
};

inline std::vector<SubcommandExtension>& subcommand_extensions() {
  static std::vector<SubcommandExtension> extensions;
  return extensions;
}

struct RegisterSubcommand {
  explicit RegisterSubcommand(SubcommandExtension e) { subcommand_extensions().push_back(std::move(e)); }
};

// Adds every extension registered for `parent` to `app`; returns (subcommand, action) pairs: run the action of
// the subcommand that was chosen.
inline std::vector<std::pair<CLI::App*, std::function<int()>>> add_subcommand_extensions(CLI::App& app, const std::string& parent) {
  std::vector<std::pair<CLI::App*, std::function<int()>>> out;
  for (const auto& e : subcommand_extensions()) {
    if (e.parent != parent) continue;
    CLI::App* sub = app.add_subcommand(e.name, e.description);
    out.emplace_back(sub, e.setup(*sub));
  }
  return out;
}

}  // namespace trainsim::cli
