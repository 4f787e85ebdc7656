// `grove params`: every parameter with its value, where the value came from,
// its type and range, and what it does.

#include <fmt/format.h>

#include "command.hpp"
#include "core/params.hpp"
#include "grove/error.hpp"

namespace grove::tools {
namespace {

std::string describe_range(const params::Spec& spec) {
  switch (spec.type) {
    case params::Type::integer:
      return fmt::format("int {}..{}", static_cast<int64_t>(spec.min),
                         static_cast<int64_t>(spec.max));
    case params::Type::bytes:
      return fmt::format("bytes {}..{}", params::format_bytes(static_cast<uint64_t>(spec.min)),
                         params::format_bytes(static_cast<uint64_t>(spec.max)));
    case params::Type::real:
      return fmt::format("real {}..{}", spec.min, spec.max);
    case params::Type::choice: {
      std::string all;
      for (const auto& c : spec.choices)
        all += (all.empty() ? "" : "|") + c;
      return all;
    }
    case params::Type::boolean:
      return "bool";
    case params::Type::string:
      return "string";
  }
  return "";
}

const RegisterCommand params_command{{
    "params",
    "List every parameter: value, source, range and description",
    [](CLI::App& sub) -> std::function<int()> {
      auto sets = std::make_shared<std::vector<std::string>>();
      sub.add_option("--param", *sets, "Set name=value before listing (checks a value)");
      return [sets] {
        params::load_process_params();
        auto& registry = params::Registry::global();
        for (const std::string& kv : *sets) {
          const auto eq = kv.find('=');
          if (eq == std::string::npos) {
            throw grove::Error(grove::Errc::usage,
                               fmt::format("--param '{}': expected name=value", kv));
          }
          registry.set(kv.substr(0, eq), kv.substr(eq + 1), params::Source::command_line);
        }
        fmt::print("{:<28} {:<16} {:<8} {:<24} {}\n", "NAME", "VALUE", "SOURCE", "RANGE",
                   "DESCRIPTION");
        for (const params::Entry* entry : registry.list()) {
          if (entry->spec.name.starts_with("test_")) continue;  // unit-test parameters
          fmt::print("{:<28} {:<16} {:<8} {:<24} {}\n", entry->spec.name, entry->text,
                     params::source_name(entry->source), describe_range(entry->spec),
                     entry->spec.doc);
        }
        fmt::print(
            "\nSet with GROVE_<NAME>=value, a file named by GROVE_PARAMS_FILE "
            "(name = value lines), or grove run --param name=value.\n");
        return 0;
      };
    },
}};

}  // namespace
}  // namespace grove::tools
