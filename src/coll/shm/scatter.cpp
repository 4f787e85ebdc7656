// Scatter on shared memory: the root copies every block into its slot and
// publishes; member m waits for the root and copies block m out.

#include <cstring>

#include "coll/shm/collectives.hpp"
#include "coll/shm/group.hpp"

namespace grove::shm {

bool scatter(Group* group, std::span<const std::byte> send, std::span<std::byte> recv, int root) {
  if (group == nullptr) return false;
  const size_t block = recv.size();
  const size_t all = block * static_cast<size_t>(group->size());
  if (group == nullptr || block == 0 || !group->fits(all, block)) return false;
  const CallSignature signature{coll::Collective::scatter, root, block};
  const uint64_t call = group->begin();
  const auto rank = static_cast<size_t>(group->rank());
  if (group->rank() == root) {
    group->await_slot_free(call, signature);
    std::memcpy(group->own_slot(call), send.data(), all);
    group->publish(call, signature);
    std::memcpy(recv.data(), send.data() + rank * block, block);
  } else {
    group->publish(call, signature);
    group->await_member(root, call, signature);
    std::memcpy(recv.data(), group->slot(root, call) + rank * block, block);
  }
  return true;
}

}  // namespace grove::shm
