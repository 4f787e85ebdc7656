// `grove run`: the local launcher. The logic lives in src/bootstrap/launcher.cpp;
// this file only turns the command line into LaunchOptions.

#include <charconv>
#include <cmath>
#include <memory>

#include <fmt/format.h>

#include "bootstrap/launcher.hpp"
#include "command.hpp"
#include "grove/error.hpp"

namespace grove::tools {
namespace {

struct RunArgs {
  std::string ranks;
  std::vector<std::string> params;
  std::string timeout;
  bool tag_output = false;
  std::string on_failure = "abort";
  std::string bind_to = "core";
  int hosts = 0;
};

[[noreturn]] void usage(const std::string& message) {
  throw Error(Errc::usage, fmt::format("grove run: {} (see grove run --help)", message));
}

// Numbers are parsed here rather than by CLI11 so every bad argument ends
// the same way: a grove::Error(usage), exit status 2.
int parse_ranks(const std::string& text) {
  if (text.empty()) usage("-n N is required");
  int value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    usage(fmt::format("-n '{}' is not a number of ranks", text));
  }
  if (value < 1) usage(fmt::format("-n must be at least 1 (got {})", value));
  return value;
}

double parse_timeout(const std::string& text) {
  if (text.empty()) return 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(value) || value <= 0) {
    usage(fmt::format("--timeout '{}' is not a positive number of seconds", text));
  }
  return value;
}

launch::OnFailure parse_on_failure(const std::string& text) {
  if (text == "abort") return launch::OnFailure::abort;
  if (text == "notify") return launch::OnFailure::notify;
  usage(fmt::format("--on-failure '{}' is not one of: abort, notify", text));
}

bool parse_bind_to(const std::string& text) {
  if (text == "core") return true;
  if (text == "none") return false;
  usage(fmt::format("--bind-to '{}' is not one of: core, none", text));
}

const RegisterCommand run_command{{
    "run",
    "Start N ranks of a program on this machine and wait for them",
    [](CLI::App& sub) -> std::function<int()> {
      auto args = std::make_shared<RunArgs>();
      sub.add_option("-n,--ranks", args->ranks, "Number of ranks to start (N >= 1)");
      // One value per --param, or it would swallow the program name.
      sub.add_option("--param", args->params,
                     "Set a parameter for every rank: name=value (repeatable)")
          ->allow_extra_args(false);
      sub.add_option("--timeout", args->timeout, "End the job after S seconds");
      sub.add_flag("--tag-output", args->tag_output, "Prefix each output line with [rank]");
      sub.add_option("--on-failure", args->on_failure,
                     "When a rank fails: abort (stop the others) or notify (tell the survivors)");
      sub.add_option("--bind-to", args->bind_to,
                     "core (default: rank r runs on the (r mod k)-th of the launcher's k CPUs) "
                     "or none");
      sub.add_option("--hosts", args->hosts,
                     "Testing: tell the ranks they run on K hosts (rank r on host r*K/N), "
                     "though all run here");
      // Everything from the program name on belongs to the program.
      sub.prefix_command();
      sub.footer("Usage: grove run -n N [options] PROGRAM [ARGS...]");
      return [args, &sub] {
        launch::LaunchOptions options;
        options.ranks = parse_ranks(args->ranks);
        for (const std::string& text : args->params)
          options.params.push_back(launch::parse_param_assignment(text));
        options.timeout_s = parse_timeout(args->timeout);
        options.tag_output = args->tag_output;
        options.on_failure = parse_on_failure(args->on_failure);
        options.bind_to_core = parse_bind_to(args->bind_to);
        if (args->hosts < 0 || args->hosts > options.ranks) {
          usage(fmt::format("--hosts {} is not in 1..{} (the number of ranks)", args->hosts,
                            options.ranks));
        }
        options.hosts = args->hosts;
        options.command = sub.remaining();
        if (!options.command.empty() && options.command.front() == "--") {
          options.command.erase(options.command.begin());
        }
        return launch::run_job(options);
      };
    },
}};

}  // namespace
}  // namespace grove::tools
