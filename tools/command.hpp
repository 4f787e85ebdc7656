#pragma once
// Subcommands of the `grove` tool register themselves: each tools/<name>.cpp
// defines one static Command, so adding a subcommand touches no other file.

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace grove::tools {

struct Command {
  std::string name;
  std::string summary;
  // Adds the subcommand's options to `sub` and returns the action to run
  // once parsing succeeded; the action returns the process exit status.
  std::function<std::function<int()>(CLI::App& sub)> setup;
};

std::vector<Command>& commands();

struct RegisterCommand {
  explicit RegisterCommand(Command command) { commands().push_back(std::move(command)); }
};

}  // namespace grove::tools
