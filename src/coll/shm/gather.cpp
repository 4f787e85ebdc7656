// Gather on shared memory: every member but the root copies its block into
// its slot and publishes; the root copies each block out as its member
// publishes.

#include <cstring>

#include "coll/shm/collectives.hpp"
#include "coll/shm/group.hpp"

namespace grove::shm {

bool gather(Group* group, std::span<const std::byte> send, std::span<std::byte> recv, int root) {
  if (group == nullptr) return false;
  const size_t block = send.size();
  if (group == nullptr || block == 0 || !group->fits(block, block)) return false;
  const CallSignature signature{coll::Collective::gather, root, block};
  const uint64_t call = group->begin();
  if (group->rank() != root) {
    group->await_slot_free(call, signature);
    std::memcpy(group->own_slot(call), send.data(), block);
    group->publish(call, signature);
    return true;
  }
  group->publish(call, signature);
  for (int m = 0; m < group->size(); ++m) {
    std::byte* to = recv.data() + static_cast<size_t>(m) * block;
    if (m == root) {
      std::memcpy(to, send.data(), block);
    } else {
      group->await_member(m, call, signature);
      std::memcpy(to, group->slot(m, call), block);
    }
  }
  return true;
}

}  // namespace grove::shm
