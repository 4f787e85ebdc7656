#pragma once
// The UCX (UCP) backend of Transport. One ucp_context (TAG | AM | RMA | AMO |
// WAKEUP) and one single-threaded worker per rank; worker addresses are
// exchanged through the PeerExchange (the bootstrap) and an endpoint to every rank (itself
// included) is created eagerly, in peer error-handling mode.
//
// Behaviour beyond the Transport contract:
// - The 64-bit UCP tag is (source rank << 44) | transport tag, so at most
//   2^20 ranks. Bad peers and tags wider than 44 bits throw grove::Error.
// - Active messages have no size limit: large ones arrive by rendezvous.
//   A message for an id with no handler yet is held and delivered, in order,
//   once one is registered.
// - A rendezvous send (tagged or AM, roughly > 8 KiB on shared memory) needs
//   the *sender* to keep calling progress() until the receiver has pulled the
//   data. A rank parked elsewhere (e.g. in a bootstrap barrier) stalls it.
// - A dead peer is found by UCX's keepalive every `ucx_keepalive_ms` (shared
//   memory: the peer's process is gone) or at once (TCP: connection reset);
//   its posted receives and sends then complete with Errc::peer_failed and
//   am_send to it is dropped. A message it sent before dying can still be
//   received. block() is woken for keepalive by UCX's timer fd.
// - Destruction flushes every endpoint for at most `ucx_close_timeout_ms`,
//   then force-closes them; completions still pending are dropped, not run.
// - Not thread-safe: one thread drives a transport.
//
// Parameters (see `grove params`): ucx_tls, ucx_keepalive_ms,
// ucx_close_timeout_ms. UCX_* environment variables still apply; ucx_tls
// overrides UCX_TLS.

#include <memory>

#include "transport/factory.hpp"
#include "transport/transport.hpp"

namespace grove {

// Collective over the exchange: every rank must call it. Throws grove::Error
// (transport or bootstrap) naming the failing step.
std::unique_ptr<Transport> make_ucx_transport(PeerExchange& exchange);

}  // namespace grove
