#include "grove/error.hpp"

namespace grove {

std::string_view errc_name(Errc code) {
  switch (code) {
    case Errc::invalid_argument:
      return "invalid argument";
    case Errc::invalid_parameter:
      return "invalid parameter";
    case Errc::timeout:
      return "timeout";
    case Errc::peer_failed:
      return "peer failed";
    case Errc::protocol:
      return "protocol error";
    case Errc::mismatch:
      return "mismatch";
    case Errc::truncated:
      return "truncated";
    case Errc::transport:
      return "transport error";
    case Errc::bootstrap:
      return "bootstrap error";
    case Errc::usage:
      return "usage";
    case Errc::internal:
      return "internal error";
    case Errc::cancelled:
      return "cancelled";
  }
  return "unknown error";
}

Error::Error(Errc code, const std::string& message) : std::runtime_error(message), code_(code) {}

}  // namespace grove
