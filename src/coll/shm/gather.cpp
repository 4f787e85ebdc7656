// Gather on shared memory.
// Slots: every member but the root copies its block into its slot and
// publishes; the root copies each block out as its member publishes.
// Single copy (docs/shm.md): every member but the root publishes its send
// buffer; the root copies each block straight into its receive buffer as
// its member publishes and after each enters one more call number, which
// frees that member; only then does it copy its own block.

#include <cstring>

#include "coll/shm/collectives.hpp"
#include "coll/shm/group.hpp"

namespace grove::shm {
namespace {

void gather_through_slots(Group& group, std::span<const std::byte> send, std::span<std::byte> recv,
                          int root, const CallSignature& signature) {
  const size_t block = send.size();
  const uint64_t call = group.begin();
  if (group.rank() != root) {
    group.await_slot_free(call, signature);
    std::memcpy(group.own_data(call, block), send.data(), block);
    group.publish_data(call, signature, block);
    return;
  }
  group.publish(call, signature);
  for (int m = 0; m < group.size(); ++m) {
    std::byte* to = recv.data() + static_cast<size_t>(m) * block;
    if (m == root) {
      std::memcpy(to, send.data(), block);
    } else {
      std::memcpy(to, group.await_data(m, call, signature, block), block);
    }
  }
}

void gather_single_copy(Group& group, std::span<const std::byte> send, std::span<std::byte> recv,
                        int root, const CallSignature& signature) {
  const size_t block = send.size();
  const uint64_t call = group.begin();
  // One more number per member the root reads: the root enters `call + j`
  // once it has copied the j-th of them (in member order, the root left
  // out), so that member's buffer is free and it returns then, not when the
  // root has copied every block.
  uint64_t last = call;
  for (int j = 1; j < group.size(); ++j)
    last = group.begin();
  if (group.rank() != root) {
    group.publish_buffer(call, send.data(), block);
    group.publish(call, signature);
    const int order = group.rank() < root ? group.rank() + 1 : group.rank();
    group.await_member(root, call + static_cast<uint64_t>(order), signature);
    // Entering the last number keeps "every member entered the call before
    // this one" true for the next call's writers.
    group.publish(last, signature);
    return;
  }
  group.publish(call, signature);
  uint64_t copied = call;
  for (int m = 0; m < group.size(); ++m) {
    if (m == root) continue;
    group.await_member(m, call, signature);
    group.pull(m, call, signature, block, 0, recv.subspan(static_cast<size_t>(m) * block, block));
    group.publish(++copied, signature);
  }
  // The others wait for the numbers above, not for the root's own block,
  // which no one else reads or writes.
  std::memcpy(recv.data() + static_cast<size_t>(root) * block, send.data(), block);
}

}  // namespace

bool gather(Group* group, std::span<const std::byte> send, std::span<std::byte> recv, int root) {
  if (group == nullptr || send.empty()) return false;
  return gather(*group, group->route(coll::Collective::gather, send.size(), send.size(), true),
                send, recv, root);
}

bool gather(Group& group, Route route, std::span<const std::byte> send, std::span<std::byte> recv,
            int root) {
  const CallSignature signature{coll::Collective::gather, root, send.size()};
  return run_route(
      group, route, [&] { gather_through_slots(group, send, recv, root, signature); },
      [&] { gather_single_copy(group, send, recv, root, signature); });
}

}  // namespace grove::shm
