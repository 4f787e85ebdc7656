// Alltoall on shared memory: every member copies all its blocks into its
// slot and publishes; then it takes block `rank` from every member's slot.
// In place works because the whole send side is in the slot before any
// block of the buffer is overwritten.

#include <cstring>

#include "coll/shm/collectives.hpp"
#include "coll/shm/group.hpp"

namespace grove::shm {

bool alltoall(Group* group, std::span<const std::byte> send, std::span<std::byte> recv) {
  if (group == nullptr) return false;
  const size_t all = recv.size();
  const size_t block = all / static_cast<size_t>(group->size());
  if (group == nullptr || block == 0 || !group->fits(all, block)) return false;
  const CallSignature signature{coll::Collective::alltoall, -1, block};
  const uint64_t call = group->begin();
  const auto rank = static_cast<size_t>(group->rank());
  const std::byte* input = send.empty() ? recv.data() : send.data();  // empty: in place
  group->await_slot_free(call, signature);
  std::memcpy(group->own_slot(call), input, all);
  group->publish(call, signature);
  for (int m = 0; m < group->size(); ++m) {
    std::byte* to = recv.data() + static_cast<size_t>(m) * block;
    if (static_cast<size_t>(m) == rank) {
      std::memcpy(to, group->own_slot(call) + rank * block, block);
    } else {
      group->await_member(m, call, signature);
      std::memcpy(to, group->slot(m, call) + rank * block, block);
    }
  }
  return true;
}

}  // namespace grove::shm
