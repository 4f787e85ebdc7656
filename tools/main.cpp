// The `grove` command: run, bench, params, and the model and simulator tools.

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "command.hpp"
#include "grove/error.hpp"

namespace grove::tools {
std::vector<Command>& commands() {
  static std::vector<Command> all;
  return all;
}
}  // namespace grove::tools

int main(int argc, char** argv) {
  using grove::tools::commands;
  CLI::App app{"grove: collective communication for parallel jobs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "grove 0.1.0");
  auto& all = commands();
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  std::function<int()> action;
  for (auto& command : all) {
    CLI::App* sub = app.add_subcommand(command.name, command.summary);
    auto run = command.setup(*sub);
    sub->callback([&action, run] { action = run; });
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints the message (or the help) and has a code per kind of
    // error (105, 106, ...); every bad command line exits with 2, as the
    // errors grove itself finds in arguments (Errc::usage) do.
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    return action ? action() : 0;
  } catch (const grove::Error& e) {
    fmt::print(stderr, "grove: {}: {}\n", grove::errc_name(e.code()), e.what());
    return e.code() == grove::Errc::usage ? 2 : 1;
  }
}
