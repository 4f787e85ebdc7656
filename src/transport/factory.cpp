#include "transport/factory.hpp"

#include <fmt/format.h>

#include "grove/error.hpp"
#include "transport/ucx/ucx_transport.hpp"

namespace grove {

std::unique_ptr<Transport> make_transport(std::string_view kind, PeerExchange& exchange) {
  if (kind == "ucx") return make_ucx_transport(exchange);
  throw Error(Errc::invalid_argument, fmt::format("no transport of kind '{}' (known: ucx)", kind));
}

}  // namespace grove
