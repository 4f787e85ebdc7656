// Bcast on shared memory.
// Slots: the root copies the message into its slot and publishes; every
// other member waits for the root and copies it out. The root returns at
// once (its buffer is free again).
// Single copy (docs/shm.md): the root publishes its buffer; every other
// member copies straight out of it into its own and enters the "consumed"
// call; the root returns once all have.

#include <cstring>

#include "coll/shm/collectives.hpp"
#include "coll/shm/group.hpp"

namespace grove::shm {
namespace {

void bcast_through_slots(Group& group, std::span<std::byte> buffer, int root,
                         const CallSignature& signature) {
  const uint64_t call = group.begin();
  if (group.rank() == root) {
    group.await_slot_free(call, signature);
    std::memcpy(group.own_data(call, buffer.size()), buffer.data(), buffer.size());
    group.publish_data(call, signature, buffer.size());
  } else {
    group.publish(call, signature);
    std::memcpy(buffer.data(), group.await_data(root, call, signature, buffer.size()),
                buffer.size());
  }
}

void bcast_single_copy(Group& group, std::span<std::byte> buffer, int root,
                       const CallSignature& signature) {
  const uint64_t call = group.begin();
  const uint64_t consumed = group.begin();
  if (group.rank() == root) {
    group.publish_buffer(call, buffer.data(), buffer.size());
    group.publish(call, signature);
    group.publish(consumed, signature);
    group.await_all(consumed, signature);
  } else {
    group.publish(call, signature);
    group.await_member(root, call, signature);
    group.pull(root, call, signature, buffer.size(), 0, buffer);
    group.publish(consumed, signature);
  }
}

}  // namespace

bool bcast(Group* group, std::span<std::byte> buffer, int root) {
  if (group == nullptr || buffer.empty()) return false;
  return bcast(*group, group->route(coll::Collective::bcast, buffer.size(), buffer.size(), true),
               buffer, root);
}

bool bcast(Group& group, Route route, std::span<std::byte> buffer, int root) {
  const CallSignature signature{coll::Collective::bcast, root, buffer.size()};
  return run_route(
      group, route, [&] { bcast_through_slots(group, buffer, root, signature); },
      [&] { bcast_single_copy(group, buffer, root, signature); });
}

}  // namespace grove::shm
