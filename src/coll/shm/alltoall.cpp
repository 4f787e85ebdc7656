// Alltoall on shared memory.
// Slots: every member copies all its blocks into its slot and publishes;
// then it takes block `rank` from every member's slot. In place works
// because the whole send side is in the slot before any block of the
// buffer is overwritten.
// Single copy (docs/shm.md): every member publishes its send buffer; it
// copies block `rank` of every other member's straight into its receive
// buffer, enters the "consumed" call, and returns once every member has. In
// place, the buffer others read is the one this member writes: its send
// side is first copied to a scratch buffer, which is published instead.

#include <cstring>

#include "coll/shm/collectives.hpp"
#include "coll/shm/group.hpp"

namespace grove::shm {
namespace {

void alltoall_through_slots(Group& group, std::span<const std::byte> send,
                            std::span<std::byte> recv, size_t block,
                            const CallSignature& signature) {
  const size_t all = recv.size();
  const uint64_t call = group.begin();
  const auto rank = static_cast<size_t>(group.rank());
  const std::byte* input = send.empty() ? recv.data() : send.data();  // empty: in place
  group.await_slot_free(call, signature);
  std::memcpy(group.own_data(call, all), input, all);
  group.publish_data(call, signature, all);
  for (int m = 0; m < group.size(); ++m) {
    std::byte* to = recv.data() + static_cast<size_t>(m) * block;
    if (static_cast<size_t>(m) == rank) {
      std::memcpy(to, group.own_data(call, all) + rank * block, block);
    } else {
      std::memcpy(to, group.await_data(m, call, signature, all) + rank * block, block);
    }
  }
}

void alltoall_single_copy(Group& group, std::span<const std::byte> send, std::span<std::byte> recv,
                          size_t block, const CallSignature& signature) {
  const size_t all = recv.size();
  const uint64_t call = group.begin();
  const uint64_t consumed = group.begin();
  const auto rank = static_cast<size_t>(group.rank());
  const std::byte* input = send.data();
  if (send.empty()) {  // in place; the own block stays where it is
    std::byte* copy = group.scratch(all);
    std::memcpy(copy, recv.data(), all);
    input = copy;
  }
  group.publish_buffer(call, input, all);
  group.publish(call, signature);
  // From the next member on (as allgather's single copy, for the same
  // reason).
  for (int i = 1; i < group.size(); ++i) {
    const int m =
        static_cast<int>((rank + static_cast<size_t>(i)) % static_cast<size_t>(group.size()));
    group.await_member(m, call, signature);
    group.pull(m, call, signature, all, rank * block,
               recv.subspan(static_cast<size_t>(m) * block, block));
  }
  // The others wait for "consumed", not for the own block's copy.
  group.publish(consumed, signature);
  if (!send.empty()) std::memcpy(recv.data() + rank * block, input + rank * block, block);
  group.await_all(consumed, signature);
}

}  // namespace

bool alltoall(Group* group, std::span<const std::byte> send, std::span<std::byte> recv) {
  if (group == nullptr) return false;
  const size_t block = recv.size() / static_cast<size_t>(group->size());
  if (block == 0) return false;
  return alltoall(*group, group->route(coll::Collective::alltoall, recv.size(), block, true), send,
                  recv);
}

bool alltoall(Group& group, Route route, std::span<const std::byte> send,
              std::span<std::byte> recv) {
  const size_t block = recv.size() / static_cast<size_t>(group.size());
  const CallSignature signature{coll::Collective::alltoall, -1, block};
  return run_route(
      group, route, [&] { alltoall_through_slots(group, send, recv, block, signature); },
      [&] { alltoall_single_copy(group, send, recv, block, signature); });
}

}  // namespace grove::shm
