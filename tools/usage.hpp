#pragma once
// Bad command lines end the same way in every subcommand: a grove::Error
// with Errc::usage, which main() turns into exit status 2 (CLI11's own
// parse errors too). Failures of the work itself exit with 1.

#include <cstdint>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "grove/error.hpp"

namespace grove::tools {

// Runs `interpret` (turning options into what the command needs: parsed
// sizes, a simulator configuration, a job) and rethrows any grove::Error
// from it as a usage error with the same message.
template <class F>
auto interpret_options(F&& interpret) -> decltype(interpret()) {
  try {
    return std::forward<F>(interpret)();
  } catch (const Error& e) {
    if (e.code() == Errc::usage) throw;
    throw Error(Errc::usage, e.what());
  }
}

inline void require_range(std::string_view option, int64_t value, int64_t min, int64_t max) {
  if (value < min || value > max) {
    throw Error(Errc::usage,
                fmt::format("{} {} is outside its range [{}, {}]", option, value, min, max));
  }
}

}  // namespace grove::tools
