#include "sched/context_registry.hpp"

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "grove/error.hpp"

namespace grove::sched {
namespace {

struct Table {
  std::mutex mutex;  // guards free_indices, next and adding blocks
  std::vector<uint32_t> free_indices;
  uint32_t next = 1;  // index 0 is never used: no token is null
};

// Never destroyed: executor states may outlive static destruction (pooled
// per thread, orphaned with messages in flight). The slots are
// ContextRegistry::blocks_, which needs no destruction.
Table& table() {
  static Table* t = new Table;
  return *t;
}

}  // namespace

constinit std::atomic<std::atomic<void*>*> ContextRegistry::blocks_[kMaxBlocks] = {};

uint32_t ContextRegistry::add(void* owner) {
  Table& t = table();
  std::lock_guard lock(t.mutex);
  uint32_t index;
  if (!t.free_indices.empty()) {
    index = t.free_indices.back();
    t.free_indices.pop_back();
  } else {
    if (t.next >= kMaxBlocks * kBlockSlots)
      throw Error(Errc::internal, fmt::format("more than {} executions exist at once",
                                              kMaxBlocks * kBlockSlots - 1));
    index = t.next++;
    auto& block = blocks_[index >> kBlockBits];
    if (block.load(std::memory_order_relaxed) == nullptr)
      block.store(new std::atomic<void*>[kBlockSlots](), std::memory_order_release);
  }
  blocks_[index >> kBlockBits].load(std::memory_order_relaxed)[index & (kBlockSlots - 1)].store(
      owner, std::memory_order_release);
  return index;
}

void ContextRegistry::remove(uint32_t index) {
  Table& t = table();
  std::lock_guard lock(t.mutex);
  blocks_[index >> kBlockBits].load(std::memory_order_relaxed)[index & (kBlockSlots - 1)].store(
      nullptr, std::memory_order_relaxed);
  t.free_indices.push_back(index);
}

}  // namespace grove::sched
