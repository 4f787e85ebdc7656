// Reduce on shared memory. Small vectors: every member but the root copies
// its operand into its slot and publishes; the root combines the operands
// in rank order as they appear, its own read from its send buffer. Larger
// ones (reduce_chunks.hpp): every member publishes its operand, member m
// combines chunk m, and the root gathers the chunks; from
// shm_cma_min_bytes the same without the slots (reduce_single_copy.hpp).
// Each element is ((r0 op r1) op r2) ... on every path.

#include <cstring>

#include "coll/shm/collectives.hpp"
#include "coll/shm/group.hpp"
#include "coll/shm/reduce_chunks.hpp"
#include "coll/shm/reduce_single_copy.hpp"
#include "sched/reduce.hpp"

namespace grove::shm {
namespace {

void reduce_at_root(Group& group, uint64_t call, const CallSignature& signature,
                    std::span<const std::byte> send, std::span<std::byte> recv, Datatype type,
                    ReduceOp op, int root) {
  const size_t bytes = send.size();
  for (int m = 0; m < group.size(); ++m) {
    const std::byte* operand = send.data();
    if (m != root) operand = group.await_data(m, call, signature, bytes);
    if (m == 0) {
      std::memcpy(recv.data(), operand, bytes);
    } else {
      sched::reduce_bytes(op, type, recv.data(), operand, bytes);
    }
  }
}

}  // namespace

bool reduce(Group* group, std::span<const std::byte> send, std::span<std::byte> recv, Datatype type,
            ReduceOp op, int root) {
  if (group == nullptr || send.empty()) return false;
  return reduce(*group, group->route(coll::Collective::reduce, send.size(), send.size(), true),
                send, recv, type, op, root);
}

bool reduce(Group& group, Route route, std::span<const std::byte> send, std::span<std::byte> recv,
            Datatype type, ReduceOp op, int root) {
  if (route == Route::none) return false;
  const size_t bytes = send.size();
  const CallSignature signature{coll::Collective::reduce, root, bytes};
  const uint64_t operands = group.begin();
  const bool at_root = group.rank() == root;

  if (route == Route::single_copy) {
    const Group::Lending lending(group);
    const uint64_t results = combine_own_chunk(group, operands, signature, send.data(), bytes, type,
                                               op, at_root ? recv.data() : nullptr);
    if (at_root) pull_chunks(group, results, signature, bytes, type, recv.data());
    // The root has read every combined chunk once it enters `consumed`
    // (and every member has read its chunk of every operand before that).
    const uint64_t consumed = group.begin();
    group.publish(consumed, signature);
    if (!at_root) group.await_member(root, consumed, signature);
    return true;
  }

  if (bytes >= split_reduction_bytes()) {
    group.await_slot_free(operands, signature);
    std::memcpy(group.own_slot(operands), send.data(), bytes);
    group.publish(operands, signature);
    const uint64_t results = reduce_own_chunk(group, operands, signature, bytes, type, op);
    if (at_root) gather_chunks(group, results, signature, bytes, type, recv.data());
    return true;
  }
  if (!at_root) {
    group.await_slot_free(operands, signature);
    std::memcpy(group.own_data(operands, bytes), send.data(), bytes);
    group.publish_data(operands, signature, bytes);
    return true;
  }
  group.publish(operands, signature);
  reduce_at_root(group, operands, signature, send, recv, type, op, root);
  return true;
}

}  // namespace grove::shm
