#include "rma/abandon.hpp"

#include "sched/executor.hpp"

namespace grove::rma {

bool abandon_rma(Transport& transport, int peer, FunctionRef<bool()> done) {
  if (sched::await_cancelled(transport, done)) return true;
  transport.cancel(peer, Tag{0}, nullptr, CancelMode::fail_peer);
  return sched::await_cancelled(transport, done);
}

}  // namespace grove::rma
