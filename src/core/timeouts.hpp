#pragma once
// The one bound on every blocking wait in grove. A wait that exceeds it
// throws grove::Error(Errc::timeout) naming what it waited for.

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "core/params.hpp"

namespace grove {

// Parameter `timeout_ms` (default 60000 ms).
const params::IntParam& timeout_ms_param();

// Current value of `timeout_ms`, in milliseconds.
inline int64_t timeout_ms() {
  return timeout_ms_param().get();
}

// Milliseconds from now until `deadline`, for poll(): 0 once it has passed,
// at most 2^30 (an int whatever the deadline).
inline int poll_ms_until(std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                        deadline - std::chrono::steady_clock::now())
                        .count();
  return static_cast<int>(std::clamp<int64_t>(left, 0, 1 << 30));
}

}  // namespace grove
