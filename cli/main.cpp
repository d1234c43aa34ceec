// trainsim: plan, simulate and validate GPU training jobs. Each subcommand lives in its own file and
// registers itself; this file only builds the CLI and maps errors to exit codes.
#include <iostream>

#include "command.hpp"
#include "models/core/errors.hpp"
#include "run_files.hpp"

namespace trainsim::cli {
NameRegistry<Command>& command_registry() {
  static NameRegistry<Command> commands(NameOrder::Registration);
  return commands;
}
}  // namespace trainsim::cli

int main(int argc, char** argv) {
  using namespace trainsim::cli;
  CLI::App app{"trainsim: capacity planning and simulation for GPU training clusters"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "trainsim 0.1.0");
  std::function<int()> run;
  for (const auto& c : command_registry().entries()) {
    CLI::App* sub = app.add_subcommand(c.name, c.description);
    auto action = c.setup(*sub);
    sub->callback([&run, action] { run = action; });
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitBadInput;
  }
  try {
    const int code = run ? run() : kExitBadInput;
    check_standard_output();
    return code;
  } catch (const trainsim::InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const OutputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitInternal;
  } catch (const std::bad_alloc&) {
    std::cerr << "internal error: out of memory\n";
    return kExitInternal;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    return kExitInternal;
  }
}
