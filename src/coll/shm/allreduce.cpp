// Allreduce on shared memory: every member copies its operand into its slot
// and publishes. Small vectors: every member then combines all operands in
// rank order itself. Larger ones (reduce_chunks.hpp): member m combines
// chunk m, publishes it, and every member gathers the chunks. From
// shm_cma_min_bytes the same two phases without the slots
// (reduce_single_copy.hpp). Each element is ((r0 op r1) op r2) ..., the
// same bits on every rank and on every path.

#include <cstring>

#include "coll/shm/collectives.hpp"
#include "coll/shm/group.hpp"
#include "coll/shm/reduce_chunks.hpp"
#include "coll/shm/reduce_single_copy.hpp"
#include "sched/reduce.hpp"

namespace grove::shm {

bool allreduce(Group* group, std::span<const std::byte> send, std::span<std::byte> recv,
               Datatype type, ReduceOp op) {
  if (group == nullptr || recv.empty()) return false;
  return allreduce(*group,
                   group->route(coll::Collective::allreduce, recv.size(), recv.size(), true), send,
                   recv, type, op);
}

bool allreduce(Group& group, Route route, std::span<const std::byte> send,
               std::span<std::byte> recv, Datatype type, ReduceOp op) {
  if (route == Route::none) return false;
  const size_t bytes = recv.size();
  const CallSignature signature{coll::Collective::allreduce, -1, bytes};
  const uint64_t operands = group.begin();
  const int rank = group.rank();
  // Empty: in place. The operand goes to the slot before recv is written;
  // on the single-copy path, chunk m of recv is written only after member
  // m has combined (read) chunk m of every operand.
  const std::byte* input = send.empty() ? recv.data() : send.data();
  if (route == Route::single_copy) {
    const Group::Lending lending(group);
    // Each member's chunk is combined in scratch, not in its receive buffer:
    // with the others reading it there while this member's own reads write
    // the rest of that buffer, 1 MiB at 2 ranks took 204-216 us against
    // 177 (alternated, 2026-12-02).
    const uint64_t results =
        combine_own_chunk(group, operands, signature, input, bytes, type, op, nullptr);
    pull_chunks(group, results, signature, bytes, type, recv.data());
    const uint64_t consumed = group.begin();
    group.publish(consumed, signature);
    group.await_all(consumed, signature);
    return true;
  }
  group.await_slot_free(operands, signature);
  if (bytes >= split_reduction_bytes()) {
    // The two-phase reduction reads every operand from its slot.
    std::memcpy(group.own_slot(operands), input, bytes);
    group.publish(operands, signature);
    const uint64_t results = reduce_own_chunk(group, operands, signature, bytes, type, op);
    gather_chunks(group, results, signature, bytes, type, recv.data());
    return true;
  }
  std::memcpy(group.own_data(operands, bytes), input, bytes);
  group.publish_data(operands, signature, bytes);
  for (int m = 0; m < group.size(); ++m) {
    const std::byte* operand = m == rank ? group.own_data(operands, bytes)
                                         : group.await_data(m, operands, signature, bytes);
    if (m == 0) {
      std::memcpy(recv.data(), operand, bytes);
    } else {
      sched::reduce_bytes(op, type, recv.data(), operand, bytes);
    }
  }
  return true;
}

}  // namespace grove::shm
