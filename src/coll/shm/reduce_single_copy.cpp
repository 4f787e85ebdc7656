#include "coll/shm/reduce_single_copy.hpp"

#include <algorithm>
#include <cstring>
#include <span>

#include "coll/shm/group.hpp"
#include "coll/shm/reduce_chunks.hpp"
#include "sched/reduce.hpp"

namespace grove::shm {
namespace {

// What one pull brings in before it is combined: well within a core's L2,
// and a multiple of every element size, so pieces end on element
// boundaries and keep the alignment of the chunk.
constexpr size_t kPieceBytes = 128 * 1024;

}  // namespace

uint64_t combine_own_chunk(Group& group, uint64_t operands, const CallSignature& signature,
                           const std::byte* operand, size_t bytes, Datatype type, ReduceOp op,
                           std::byte* result) {
  group.publish_buffer(operands, operand, bytes);
  group.publish(operands, signature);
  const Chunk chunk = reduction_chunk(bytes, datatype_size(type), group.size(), group.rank());
  // The combined chunk goes straight to its place in the result when there
  // is one that is not this member's own operand chunk (which it reads
  // while combining, in place); else to scratch, with room after it for one
  // operand's chunk.
  const size_t piece = std::min(kPieceBytes, chunk.length);
  std::byte* scratch = group.scratch(chunk.length + piece);
  std::byte* combined = scratch;
  if (result != nullptr) {
    std::byte* to = result + chunk.first;
    const std::byte* own = operand + chunk.first;
    if (to + chunk.length <= own || own + chunk.length <= to) combined = to;
  }
  std::byte* incoming = scratch + chunk.length;
  for (int m = 0; m < group.size(); ++m) {
    if (m == group.rank()) {
      if (chunk.length == 0) continue;
      if (m == 0) {
        std::memcpy(combined, operand + chunk.first, chunk.length);
      } else {
        sched::reduce_bytes(op, type, combined, operand + chunk.first, chunk.length);
      }
      continue;
    }
    group.await_member(m, operands, signature);
    if (m == 0) {
      // The first operand is copied where the combination starts.
      group.pull(m, operands, signature, bytes, chunk.first, std::span(combined, chunk.length));
      continue;
    }
    // Piece by piece, each combined while it is still in this core's cache
    // (a whole chunk of a large vector is not).
    for (size_t done = 0; done < chunk.length; done += piece) {
      const size_t n = std::min(piece, chunk.length - done);
      group.pull(m, operands, signature, bytes, chunk.first + done, std::span(incoming, n));
      sched::reduce_bytes(op, type, combined + done, incoming, n);
    }
  }
  const uint64_t results = group.begin();
  group.publish_buffer(results, combined, chunk.length);
  group.publish(results, signature);
  return results;
}

void pull_chunks(Group& group, uint64_t results, const CallSignature& signature, size_t bytes,
                 Datatype type, std::byte* out) {
  for (int m = 0; m < group.size(); ++m) {
    const Chunk chunk = reduction_chunk(bytes, datatype_size(type), group.size(), m);
    const std::span<std::byte> to(out + chunk.first, chunk.length);
    if (m == group.rank()) {
      // Combined in place unless combine_own_chunk had to use scratch.
      const std::byte* combined = group.own_buffer(results);
      if (chunk.length > 0 && combined != to.data()) std::memcpy(to.data(), combined, chunk.length);
    } else {
      group.await_member(m, results, signature);
      group.pull(m, results, signature, chunk.length, 0, to);
    }
  }
}

}  // namespace grove::shm
