// Allgather on shared memory.
// Slots: every member copies its block into its slot and publishes, then
// copies every other member's block out as it appears.
// Single copy (docs/shm.md): every member publishes its block where it is
// (the send buffer, or its own block of the receive buffer in place, which
// no member writes in this call), copies every other member's block
// straight into its receive buffer, enters the "consumed" call, and returns
// once every member has.

#include <cstring>

#include "coll/shm/collectives.hpp"
#include "coll/shm/group.hpp"

namespace grove::shm {
namespace {

void allgather_through_slots(Group& group, std::span<const std::byte> send,
                             std::span<std::byte> recv, size_t block,
                             const CallSignature& signature) {
  const uint64_t call = group.begin();
  const int rank = group.rank();
  std::byte* mine = recv.data() + static_cast<size_t>(rank) * block;
  const std::byte* input = send.empty() ? mine : send.data();  // empty: in place
  group.await_slot_free(call, signature);
  std::memcpy(group.own_data(call, block), input, block);
  group.publish_data(call, signature, block);
  if (!send.empty()) std::memcpy(mine, input, block);
  for (int m = 0; m < group.size(); ++m) {
    if (m == rank) continue;
    std::memcpy(recv.data() + static_cast<size_t>(m) * block,
                group.await_data(m, call, signature, block), block);
  }
}

void allgather_single_copy(Group& group, std::span<const std::byte> send, std::span<std::byte> recv,
                           size_t block, const CallSignature& signature) {
  const uint64_t call = group.begin();
  const uint64_t consumed = group.begin();
  const int rank = group.rank();
  std::byte* mine = recv.data() + static_cast<size_t>(rank) * block;
  const std::byte* input = send.empty() ? mine : send.data();  // empty: in place
  group.publish_buffer(call, input, block);
  group.publish(call, signature);
  // From the next member on: were every member to read member 0 first, then
  // 1, ..., the kernel would pin the same owner's pages for all at once.
  for (int i = 1; i < group.size(); ++i) {
    const int m = (rank + i) % group.size();
    group.await_member(m, call, signature);
    group.pull(m, call, signature, block, 0, recv.subspan(static_cast<size_t>(m) * block, block));
  }
  // The others wait for "consumed", not for the own block's copy.
  group.publish(consumed, signature);
  if (!send.empty()) std::memcpy(mine, input, block);
  group.await_all(consumed, signature);
}

}  // namespace

bool allgather(Group* group, std::span<const std::byte> send, std::span<std::byte> recv) {
  if (group == nullptr) return false;
  const size_t block = recv.size() / static_cast<size_t>(group->size());
  if (block == 0) return false;
  return allgather(*group, group->route(coll::Collective::allgather, block, block, true), send,
                   recv);
}

bool allgather(Group& group, Route route, std::span<const std::byte> send,
               std::span<std::byte> recv) {
  const size_t block = recv.size() / static_cast<size_t>(group.size());
  const CallSignature signature{coll::Collective::allgather, -1, block};
  return run_route(
      group, route, [&] { allgather_through_slots(group, send, recv, block, signature); },
      [&] { allgather_single_copy(group, send, recv, block, signature); });
}

}  // namespace grove::shm
