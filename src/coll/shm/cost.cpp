// The shared-memory engine's closed forms (docs/tuning.md, "Host terms").
// Each is the engine's critical path in copies: a writer copies into its
// slot and publishes, readers observe and copy out, all readers at once (one
// core each). s = shm_us is one publish-and-observe; each copy is priced by
// where its bytes are, with the curves `grove probe` measures between two
// ranks of a host:
//   c(n)   memcpy within one process (a member's own block or own slot);
//   ci(n)  memcpy into the member's slot, which the other members copied
//          out of last (their caches hold its lines);
//   co(n)  memcpy out of another member's slot, which it wrote last;
//   cx(n)  process_vm_readv of another member's buffer (the kernel pins its
//          pages and copies them, which costs more than a memcpy).
// A contribution that fits an inline line (group.hpp, kInlineBytes) reaches
// its readers with the observe s prices (tools/tuning/host_terms.hpp calibrates
// s on a slot-sized call, whose copy out is a miss of its own), so its copy
// out is priced as c.
// A reduction of n bytes is charged as one copy of n (it reads two operands
// and writes one, as memcpy reads one and writes one: the same order, and
// the fits stay within the +-20% the tuning report checks). Copies that run
// on different members at once count once, the longer (max). Two-phase
// reductions (from shm_split_reduction_bytes) publish twice.
//
// The single-copy path (from shm_cma_min_bytes; docs/shm.md) publishes
// twice (the buffer, then "consumed"; reductions three times) and copies
// each byte once, straight from the owner's buffer to the reader's: a
// reader's copies are its critical path. A one-host job's members are
// assumed to agree that CMA works; a job where they did not runs the slot
// path or the schedule path, as Group::route says.

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "coll/shm/cma.hpp"
#include "coll/shm/collectives.hpp"
#include "coll/shm/group.hpp"
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
  // A curve the model lacks is priced as a copy within one process.
  auto priced = [&](const std::function<double(double)>& curve) { return curve ? curve : m.copy; };
  const std::function<double(double)>& local = m.copy;
  const std::function<double(double)> in = priced(m.copy_in);
  const std::function<double(double)> out = priced(m.copy_out);
  const std::function<double(double)> cma = priced(m.copy_cma);
  const bool split = b >= static_cast<double>(split_reduction_bytes());
  const double cma_from = static_cast<double>(cma_min_bytes(collective));
  if (cma_from > 0 && b >= cma_from) {
    switch (collective) {
      case coll::Collective::bcast:
        return 2 * s + cma(b);
      case coll::Collective::scatter:
        // The root copies its own block while the others read theirs.
        return 2 * s + std::max(local(b), cma(b));
      case coll::Collective::gather:
      case coll::Collective::allgather:
      case coll::Collective::alltoall:
        // The own block within the process, every other from its owner.
        return 2 * s + local(b) + (p - 1) * cma(b);
      case coll::Collective::reduce:
        // Chunk m of every operand (the own one within the process), then
        // every other member's combined chunk (the root combines its own at
        // its place in the result); operands, chunks and "consumed" are
        // three publishes.
        return 3 * s + local(b / p) + 2 * (p - 1) * cma(b / p);
      case coll::Collective::allreduce:
        // The same, with the own combined chunk copied from scratch.
        return 3 * s + 2 * (local(b / p) + (p - 1) * cma(b / p));
      default:
        break;  // no single-copy form: the slots
    }
  }
  // A reader's copy of `copied` bytes of a member's contribution of
  // `contributed`: from the member's slot, or, when the contribution fits an
  // inline line (group.hpp), from the line its observe brought (s prices
  // that observe).
  auto read = [&](double contributed, double copied) {
    return contributed <= static_cast<double>(kInlineBytes) ? local(copied) : out(copied);
  };
  switch (collective) {
    case coll::Collective::barrier:
      return s;
    case coll::Collective::bcast:
      return s + in(b) + read(b, b);
    case coll::Collective::scatter:
      // The root's own block while the others copy theirs out.
      return s + in(p * b) + std::max(local(b), read(p * b, b));
    case coll::Collective::gather:
    case coll::Collective::allgather:
      return s + in(b) + local(b) + (p - 1) * read(b, b);
    case coll::Collective::alltoall:
      return s + in(p * b) + local(b) + (p - 1) * read(p * b, b);
    case coll::Collective::reduce:
    case coll::Collective::allreduce:
      if (split) return 2 * s + in(b) + 2 * (local(b / p) + (p - 1) * out(b / p));
      return s + in(b) + local(b) + (p - 1) * read(b, b);
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
          "fits shm_max_bytes and the slots, or from shm_cma_min_bytes (blocks: "
          "shm_cma_min_block_bytes) copied once between "
          "the ranks' buffers (docs/shm.md)",
      .schedule = false};
  info.cost = coll::closed_form(
      "host terms: s + copies on the critical path (docs/tuning.md)", "none", coll::cost::never, 0,
      false,
      [collective](const CostCase& c, const PortModel& m) { return engine_us(collective, c, m); });
  return info;
}

}  // namespace grove::shm
