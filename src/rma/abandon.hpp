#pragma once
// One-sided operations cannot be cancelled (UCX stops no put, get or
// atomic), so a caller that stops waiting for one (a timeout, a departed
// peer) must not hand its buffers back while the transport may still write
// or read them. abandon_rma does what Transport::cancel's last resort does
// for a receive (docs/rma.md, "Timeouts"):
//   1. wait at most cancel_wait_ms for the operation's completion;
//   2. then give up on the connection to `peer` (CancelMode::fail_peer,
//      which fails whatever is in flight with it) and wait again as long.
// True once `done()` holds: the buffers are free again. False: the
// operation is still in flight and the caller must keep its buffers (and
// completion context) alive for good.

#include "core/function_ref.hpp"
#include "transport/transport.hpp"

namespace grove::rma {

bool abandon_rma(Transport& transport, int peer, FunctionRef<bool()> done);

}  // namespace grove::rma
