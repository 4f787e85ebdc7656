#pragma once
// The message of the grove::Error `f` throws, or "no error" when it throws
// none: for tests that check a refusal names its cause.

#include <functional>
#include <string>

#include "grove/error.hpp"

namespace grove::testing {

inline std::string error_text(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace grove::testing
