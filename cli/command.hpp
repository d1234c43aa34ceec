#pragma once
// Subcommands register themselves by name (one .cpp each); main() builds the CLI from the registry.
#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "models/core/name_registry.hpp"

namespace trainsim::cli {

// Exit codes: 0 success, 2 bad input (scenario, flags, files), 1 anything unexpected.
constexpr int kExitOk = 0, kExitInternal = 1, kExitBadInput = 2;

struct Command {
  std::string name;
  std::string description;
  // Adds the subcommand's options to `app` and returns what to run when it is chosen.
  std::function<std::function<int()>(CLI::App& app)> setup;
};

// In registration order (the order of the files on the link line): the order --help lists them in.
NameRegistry<Command>& command_registry();

struct RegisterCommand {
  explicit RegisterCommand(Command c) { command_registry().add(std::move(c)); }
};

}  // namespace trainsim::cli
