// Bcast on shared memory: the root copies the message into its slot and
// publishes; every other member waits for the root and copies it out. The
// root returns at once (its buffer is free again).

#include <cstring>

#include "coll/shm/collectives.hpp"
#include "coll/shm/group.hpp"

namespace grove::shm {

bool bcast(Group* group, std::span<std::byte> buffer, int root) {
  if (group == nullptr) return false;
  const size_t bytes = buffer.size();
  if (group == nullptr || bytes == 0 || !group->fits(bytes, bytes)) return false;
  const CallSignature signature{coll::Collective::bcast, root, bytes};
  const uint64_t call = group->begin();
  if (group->rank() == root) {
    group->await_slot_free(call, signature);
    std::memcpy(group->own_slot(call), buffer.data(), bytes);
    group->publish(call, signature);
  } else {
    group->publish(call, signature);
    group->await_member(root, call, signature);
    std::memcpy(buffer.data(), group->slot(root, call), bytes);
  }
  return true;
}

}  // namespace grove::shm
