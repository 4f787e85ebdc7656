#include "core/timeouts.hpp"

namespace grove {

const params::IntParam& timeout_ms_param() {
  // Declared on first use, which happens during static initialisation of the
  // shared library (see `registered` below), so `grove params` always lists it.
  static const params::IntParam param{
      "timeout_ms", 60000, 1, 86400000,
      "bound on every blocking wait (collectives, bootstrap, connection set-up), in ms"};
  return param;
}

namespace {
// Registers the parameter at load time even if nothing has read it yet.
[[maybe_unused]] const params::IntParam& registered = timeout_ms_param();
}  // namespace

}  // namespace grove
