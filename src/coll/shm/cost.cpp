// The shared-memory engine's closed forms (docs/tuning.md, "Host terms").
// Each is the engine's critical path in copies: a writer copies into its
// slot and publishes, readers observe and copy out, all readers at once (one
// core each). s = shm_us is one publish-and-observe, c(n) one memcpy of n
// bytes; a reduction of n bytes is charged as one copy of n (it reads two
// operands and writes one, as memcpy reads one and writes one: the same
// order, and the fits stay within the +-20% the tuning report checks).
// Two-phase reductions (from shm_split_reduction_bytes) publish twice.
//
// The single-copy path (from shm_cma_min_bytes; docs/shm.md) publishes
// twice (the buffer, then "consumed"; reductions three times) and copies
// each byte once, straight from the owner's buffer to the reader's:
// a reader's copies are its critical path, priced with the same c(n) (a
// process_vm_readv copy is a memcpy done by the kernel). A one-host job's
// members are assumed to agree that CMA works; a job where they did not
// runs the slot path or the schedule path, as Group::route says.

#include <cmath>
#include <limits>

#include "coll/shm/cma.hpp"
#include "coll/shm/collectives.hpp"
#include "coll/shm/reduce_chunks.hpp"

namespace grove::shm {
namespace {

using coll::CostCase;
using coll::PortModel;

double not_priced() {
  return std::numeric_limits<double>::quiet_NaN();
}

// The critical path of `collective` with P = c.ranks and m = c.bytes.
double engine_us(coll::Collective collective, const CostCase& c, const PortModel& m) {
  if (!m.copy) return not_priced();
  const double p = c.ranks, b = c.bytes, s = m.shm_us;
  auto copy = [&](double n) { return m.copy(n); };
  const bool split = b >= static_cast<double>(split_reduction_bytes());
  const double cma_from = static_cast<double>(cma_min_bytes());
  if (cma_from > 0 && b >= cma_from) {
    switch (collective) {
      case coll::Collective::bcast:
      case coll::Collective::scatter:
        return 2 * s + copy(b);
      case coll::Collective::gather:
      case coll::Collective::allgather:
      case coll::Collective::alltoall:
        return 2 * s + p * copy(b);
      case coll::Collective::reduce:
      case coll::Collective::allreduce:
        // Chunk m of every operand, then every combined chunk; operands,
        // chunks and "consumed" are three publishes.
        return 3 * s + 2 * p * copy(b / p);
      default:
        break;  // no single-copy form: the slots
    }
  }
  switch (collective) {
    case coll::Collective::barrier:
      return s;
    case coll::Collective::bcast:
      return s + 2 * copy(b);
    case coll::Collective::scatter:
      return s + copy(p * b) + copy(b);
    case coll::Collective::gather:
    case coll::Collective::allgather:
      return s + copy(b) + p * copy(b);
    case coll::Collective::alltoall:
      return s + copy(p * b) + p * copy(b);
    case coll::Collective::reduce:
    case coll::Collective::allreduce:
      if (split) return 2 * s + copy(b) + 2 * p * copy(b / p);
      return s + copy(b) + p * copy(b);
    default:
      return not_priced();
  }
}

}  // namespace

coll::AlgorithmInfo algorithm(coll::Collective collective) {
  coll::AlgorithmInfo info{
      .name = "shm",
      .doc =
          "through the communicator's shared-memory segment: blocking calls whose message "
          "fits shm_max_bytes and the slots, or from shm_cma_min_bytes copied once between "
          "the ranks' buffers (docs/shm.md)",
      .schedule = false};
  info.cost = coll::closed_form(
      "host terms: s + copies on the critical path (docs/tuning.md)", "none", coll::cost::never, 0,
      false,
      [collective](const CostCase& c, const PortModel& m) { return engine_us(collective, c, m); });
  return info;
}

}  // namespace grove::shm
