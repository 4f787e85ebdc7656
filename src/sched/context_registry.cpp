#include "sched/context_registry.hpp"

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "grove/error.hpp"

namespace grove::sched {
namespace {

// Slots in blocks that never move once published, so a lookup needs no lock
// while another thread adds a block.
constexpr uint32_t kBlockBits = 12;
constexpr uint32_t kBlockSlots = 1u << kBlockBits;
constexpr uint32_t kMaxBlocks = 1u << 12;  // 16 M owners at once

struct Table {
  std::atomic<std::atomic<void*>*> blocks[kMaxBlocks] = {};
  std::mutex mutex;  // guards free_indices, next and adding blocks
  std::vector<uint32_t> free_indices;
  uint32_t next = 1;  // index 0 is never used: no token is null
};

// Never destroyed: executor states may outlive static destruction (pooled
// per thread, orphaned with messages in flight).
Table& table() {
  static Table* t = new Table;
  return *t;
}

std::atomic<void*>& slot(Table& t, uint32_t index) {
  std::atomic<void*>* block = t.blocks[index >> kBlockBits].load(std::memory_order_acquire);
  return block[index & (kBlockSlots - 1)];
}

}  // namespace

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
    auto& block = t.blocks[index >> kBlockBits];
    if (block.load(std::memory_order_relaxed) == nullptr)
      block.store(new std::atomic<void*>[kBlockSlots](), std::memory_order_release);
  }
  slot(t, index).store(owner, std::memory_order_release);
  return index;
}

void ContextRegistry::remove(uint32_t index) {
  Table& t = table();
  std::lock_guard lock(t.mutex);
  slot(t, index).store(nullptr, std::memory_order_relaxed);
  t.free_indices.push_back(index);
}

void* ContextRegistry::owner(uint32_t index) {
  return slot(table(), index).load(std::memory_order_acquire);
}

}  // namespace grove::sched
