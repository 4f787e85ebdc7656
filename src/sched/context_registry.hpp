#pragma once
// Completion contexts that cost no memory per message: the context an
// execution hands to Transport::send/recv is not a pointer to a per-step
// record but a token, (owner index << 32) | step id, cast to void*.
// Transports never dereference a context (transport.hpp: they only pass it
// back to the completion function), so a token is as good as a pointer, and
// an execution with a million receives posted at once (a ring allgather at
// 10,000 ranks, all ranks in one simulator) needs no per-receive record.
//
// The registry maps owner indices to owners. Indices are taken when an
// executor state is created and returned when it is destroyed (pooled
// states keep theirs), so a collective call takes none. Lookups take no
// lock: an owner's slot is written before the owner posts anything, and the
// transport's completion of a message happens after its posting.

#include <atomic>
#include <cstdint>

#include "sched/schedule.hpp"

namespace grove::sched {

class ContextRegistry {
 public:
  // A free index (>= 1, so no token is null) now naming `owner`.
  static uint32_t add(void* owner);
  static void remove(uint32_t index);
  // Inline: every message's completion looks its owner up.
  static void* owner(uint32_t index) {
    const std::atomic<void*>* block = blocks_[index >> kBlockBits].load(std::memory_order_acquire);
    return block[index & (kBlockSlots - 1)].load(std::memory_order_acquire);
  }

  static void* token(uint32_t index, StepId step) {
    return reinterpret_cast<void*>(static_cast<uintptr_t>(uint64_t{index} << 32 | step));
  }
  static uint32_t index_of(const void* token) {
    return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(token) >> 32);
  }
  static StepId step_of(const void* token) {
    return static_cast<StepId>(reinterpret_cast<uintptr_t>(token) & 0xffffffffu);
  }

 private:
  // Slots in blocks that never move once published, so a lookup needs no
  // lock while another thread adds a block. Constant-initialised and
  // trivially destructible: executor states may outlive static destruction
  // (pooled per thread, orphaned with messages in flight).
  static constexpr uint32_t kBlockBits = 12;
  static constexpr uint32_t kBlockSlots = 1u << kBlockBits;
  static constexpr uint32_t kMaxBlocks = 1u << 12;  // 16 M owners at once
  static std::atomic<std::atomic<void*>*> blocks_[kMaxBlocks];
};

static_assert(sizeof(void*) == 8, "completion tokens need 64-bit pointers");

}  // namespace grove::sched
