#include "coll/shm/reduce_single_copy.hpp"

#include <cstring>
#include <span>

#include "coll/shm/group.hpp"
#include "coll/shm/reduce_chunks.hpp"
#include "sched/reduce.hpp"

namespace grove::shm {

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
  std::byte* scratch = group.scratch(2 * chunk.length);
  std::byte* combined = scratch;
  if (result != nullptr) {
    std::byte* to = result + chunk.first;
    const std::byte* own = operand + chunk.first;
    if (to + chunk.length <= own || own + chunk.length <= to) combined = to;
  }
  const std::span<std::byte> incoming(scratch + chunk.length, chunk.length);
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
    // The first operand is copied where the combination starts.
    const std::span<std::byte> to = m == 0 ? std::span(combined, chunk.length) : incoming;
    group.pull(m, operands, signature, bytes, chunk.first, to);
    if (m != 0 && chunk.length > 0)
      sched::reduce_bytes(op, type, combined, incoming.data(), chunk.length);
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
