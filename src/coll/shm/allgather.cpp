// Allgather on shared memory: every member copies its block into its slot
// and publishes, then copies every other member's block out as it appears.

#include <cstring>

#include "coll/shm/collectives.hpp"
#include "coll/shm/group.hpp"

namespace grove::shm {

bool allgather(Group* group, std::span<const std::byte> send, std::span<std::byte> recv) {
  if (group == nullptr) return false;
  const size_t block = recv.size() / static_cast<size_t>(group->size());
  if (group == nullptr || block == 0 || !group->fits(block, block)) return false;
  const CallSignature signature{coll::Collective::allgather, -1, block};
  const uint64_t call = group->begin();
  const int rank = group->rank();
  std::byte* mine = recv.data() + static_cast<size_t>(rank) * block;
  const std::byte* input = send.empty() ? mine : send.data();  // empty: in place
  group->await_slot_free(call, signature);
  std::memcpy(group->own_slot(call), input, block);
  group->publish(call, signature);
  if (!send.empty()) std::memcpy(mine, input, block);
  for (int m = 0; m < group->size(); ++m) {
    if (m == rank) continue;
    group->await_member(m, call, signature);
    std::memcpy(recv.data() + static_cast<size_t>(m) * block, group->slot(m, call), block);
  }
  return true;
}

}  // namespace grove::shm
