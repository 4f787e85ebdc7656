#pragma once
// grove::Error: the one exception type grove throws. Its message names the
// rank, the operation and the cause, so a user can act on it without a debugger.

#include <stdexcept>
#include <string>
#include <string_view>

namespace grove {

enum class Errc {
  invalid_argument,   // a public call got arguments it cannot honour
  invalid_parameter,  // an unknown parameter name or an out-of-range value
  timeout,            // a wait exceeded timeout_ms
  peer_failed,        // a peer departed or its connection broke
  protocol,           // malformed bytes from another process
  mismatch,           // peers disagree on algorithm, topology or radix
  truncated,          // a message larger than the posted receive buffer
  transport,          // the transport backend reported an error
  bootstrap,          // ranks could not find each other
  usage,              // a command-line usage error
  internal,           // a broken invariant inside grove
  cancelled,          // an operation stopped before it completed (its call failed or was dropped)
};

std::string_view errc_name(Errc code);

class Error : public std::runtime_error {
 public:
  Error(Errc code, const std::string& message);
  Errc code() const noexcept { return code_; }

 private:
  Errc code_;
};

}  // namespace grove
