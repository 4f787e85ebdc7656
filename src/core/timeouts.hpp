#pragma once
// The one bound on every blocking wait in grove. A wait that exceeds it
// throws grove::Error(Errc::timeout) naming what it waited for.

#include "core/params.hpp"

namespace grove {

// Parameter `timeout_ms` (default 60000 ms).
const params::IntParam& timeout_ms_param();

// Current value of `timeout_ms`, in milliseconds.
inline int64_t timeout_ms() {
  return timeout_ms_param().get();
}

}  // namespace grove
