#include "coll/shm/reduce_single_copy.hpp"

#include <cstring>
#include <span>

#include "coll/shm/group.hpp"
#include "coll/shm/reduce_chunks.hpp"
#include "sched/reduce.hpp"

namespace grove::shm {

uint64_t combine_own_chunk(Group& group, uint64_t operands, const CallSignature& signature,
                           const std::byte* operand, size_t bytes, Datatype type, ReduceOp op) {
  group.publish_buffer(operands, operand, bytes);
  group.publish(operands, signature);
  const Chunk chunk = reduction_chunk(bytes, datatype_size(type), group.size(), group.rank());
  // The combined chunk, then room for one operand's chunk.
  std::byte* combined = group.scratch(2 * chunk.length);
  const std::span<std::byte> incoming(combined + chunk.length, chunk.length);
  for (int m = 0; m < group.size(); ++m) {
    const std::byte* part = operand + chunk.first;
    if (m != group.rank()) {
      group.await_member(m, operands, signature);
      group.pull(m, operands, signature, bytes, chunk.first, incoming);
      part = incoming.data();
    }
    if (chunk.length == 0) continue;
    if (m == 0) {
      std::memcpy(combined, part, chunk.length);
    } else {
      sched::reduce_bytes(op, type, combined, part, chunk.length);
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
      if (chunk.length > 0) std::memcpy(to.data(), group.scratch(2 * chunk.length), chunk.length);
    } else {
      group.await_member(m, results, signature);
      group.pull(m, results, signature, chunk.length, 0, to);
    }
  }
}

}  // namespace grove::shm
