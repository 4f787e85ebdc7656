// Scatter on shared memory.
// Slots: the root copies every block into its slot and publishes; member m
// waits for the root and copies block m out.
// Single copy (docs/shm.md): the root publishes its send buffer; member m
// copies block m straight out of it and enters the "consumed" call; the
// root returns once all have.

#include <cstring>

#include "coll/shm/collectives.hpp"
#include "coll/shm/group.hpp"

namespace grove::shm {
namespace {

void scatter_through_slots(Group& group, std::span<const std::byte> send, std::span<std::byte> recv,
                           int root, const CallSignature& signature) {
  const size_t block = recv.size();
  const size_t all = block * static_cast<size_t>(group.size());
  const uint64_t call = group.begin();
  const auto rank = static_cast<size_t>(group.rank());
  if (group.rank() == root) {
    group.await_slot_free(call, signature);
    std::memcpy(group.own_data(call, all), send.data(), all);
    group.publish_data(call, signature, all);
    std::memcpy(recv.data(), send.data() + rank * block, block);
  } else {
    group.publish(call, signature);
    std::memcpy(recv.data(), group.await_data(root, call, signature, all) + rank * block, block);
  }
}

void scatter_single_copy(Group& group, std::span<const std::byte> send, std::span<std::byte> recv,
                         int root, const CallSignature& signature) {
  const size_t block = recv.size();
  const uint64_t call = group.begin();
  const uint64_t consumed = group.begin();
  const auto rank = static_cast<size_t>(group.rank());
  if (group.rank() == root) {
    group.publish_buffer(call, send.data(), block * static_cast<size_t>(group.size()));
    group.publish(call, signature);
    group.publish(consumed, signature);
    std::memcpy(recv.data(), send.data() + rank * block, block);
    group.await_all(consumed, signature);
  } else {
    group.publish(call, signature);
    group.await_member(root, call, signature);
    group.pull(root, call, signature, block * static_cast<size_t>(group.size()), rank * block,
               recv);
    group.publish(consumed, signature);
  }
}

}  // namespace

bool scatter(Group* group, std::span<const std::byte> send, std::span<std::byte> recv, int root) {
  if (group == nullptr || recv.empty()) return false;
  const size_t all = recv.size() * static_cast<size_t>(group->size());
  return scatter(*group, group->route(coll::Collective::scatter, all, recv.size(), true), send,
                 recv, root);
}

bool scatter(Group& group, Route route, std::span<const std::byte> send, std::span<std::byte> recv,
             int root) {
  const CallSignature signature{coll::Collective::scatter, root, recv.size()};
  return run_route(
      group, route, [&] { scatter_through_slots(group, send, recv, root, signature); },
      [&] { scatter_single_copy(group, send, recv, root, signature); });
}

}  // namespace grove::shm
