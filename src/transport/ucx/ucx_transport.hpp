#pragma once
// The UCX (UCP) backend of Transport. One ucp_context and one worker per rank;
// worker addresses are exchanged through the bootstrap and an endpoint to
// every rank (itself included) is created eagerly at construction.
//
// Parameters (see `grove params`): ucx_tls, ucx_keepalive_ms,
// ucx_close_timeout_ms.

#include <memory>

#include "bootstrap/bootstrap.hpp"
#include "transport/transport.hpp"

namespace grove {

// Collective over the bootstrap: every rank must call it. Throws grove::Error
// (transport or bootstrap) naming the failing step.
std::unique_ptr<Transport> make_ucx_transport(Bootstrap& bootstrap);

}  // namespace grove
