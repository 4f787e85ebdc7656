#include "rma/word_ops.hpp"

#include <cstring>

#include "sched/reduce.hpp"
#include "transport/rma_local.hpp"

namespace grove::rma {

WordSpot word_spot(size_t byte_offset, Datatype type) {
  const size_t element = datatype_size(type);
  const uint8_t width = element == 8 ? 8 : 4;
  const size_t word = byte_offset / width * width;
  return {word, width, static_cast<uint8_t>(byte_offset - word)};
}

bool native_op(ReduceOp op, Datatype type, RmaAtomicOp* out) {
  const bool integer = type != Datatype::float32 && type != Datatype::float64;
  if (!integer || datatype_size(type) < 4) return false;
  switch (op) {
    case ReduceOp::sum:
      *out = RmaAtomicOp::add;
      return true;
    case ReduceOp::band:
      *out = RmaAtomicOp::band;
      return true;
    case ReduceOp::bor:
      *out = RmaAtomicOp::bor;
      return true;
    case ReduceOp::bxor:
      *out = RmaAtomicOp::bxor;
      return true;
    default:
      return false;
  }
}

namespace {

uint64_t operand_word(const std::byte* operand, size_t size) {
  uint64_t word = 0;
  std::memcpy(&word, operand, size);
  return word;
}

// Runs next = update(element of old) as a compare-and-swap loop on the
// containing word; returns the element's bytes before the successful swap.
template <class Update>
void cas_loop(WordAccess& access, const WordSpot& spot, size_t element, std::byte* old,
              Update&& update) {
  uint64_t current = access.load(spot.word_offset, spot.width);
  for (;;) {
    std::byte before[8], after[8];
    std::memcpy(before, reinterpret_cast<const std::byte*>(&current) + spot.shift, element);
    if (!update(before, after)) {  // nothing to write
      if (old != nullptr) std::memcpy(old, before, element);
      return;
    }
    uint64_t next = current;
    std::memcpy(reinterpret_cast<std::byte*>(&next) + spot.shift, after, element);
    const uint64_t seen = access.compare_swap(spot.word_offset, spot.width, current, next);
    if (seen == current) {
      if (old != nullptr) std::memcpy(old, before, element);
      return;
    }
    current = seen;
  }
}

}  // namespace

void combine(WordAccess& access, size_t byte_offset, Datatype type, ReduceOp op,
             const std::byte* operand, std::byte* old) {
  const size_t element = datatype_size(type);
  const WordSpot spot = word_spot(byte_offset, type);
  RmaAtomicOp native{};
  if (native_op(op, type, &native)) {
    uint64_t fetched = 0;
    if (access.native(spot.word_offset, spot.width, native, operand_word(operand, element),
                      old != nullptr ? &fetched : nullptr)) {
      if (old != nullptr) std::memcpy(old, &fetched, element);
      return;
    }
  }
  cas_loop(access, spot, element, old, [&](const std::byte* before, std::byte* after) {
    std::memcpy(after, before, element);
    sched::reduce_bytes(op, type, after, operand, element);
    return true;
  });
}

void compare_and_swap(WordAccess& access, size_t byte_offset, Datatype type,
                      const std::byte* compare, const std::byte* desired, std::byte* old) {
  const size_t element = datatype_size(type);
  const WordSpot spot = word_spot(byte_offset, type);
  if (element == spot.width) {
    const uint64_t previous =
        access.compare_swap(spot.word_offset, spot.width, operand_word(compare, element),
                            operand_word(desired, element));
    std::memcpy(old, &previous, element);
    return;
  }
  cas_loop(access, spot, element, old, [&](const std::byte* before, std::byte* after) {
    if (std::memcmp(before, compare, element) != 0) return false;
    std::memcpy(after, desired, element);
    return true;
  });
}

uint64_t MappedWords::load(size_t word_offset, uint8_t width) {
  if (width == 4)
    return __atomic_load_n(reinterpret_cast<uint32_t*>(base_ + word_offset), __ATOMIC_ACQUIRE);
  return __atomic_load_n(reinterpret_cast<uint64_t*>(base_ + word_offset), __ATOMIC_ACQUIRE);
}

uint64_t MappedWords::compare_swap(size_t word_offset, uint8_t width, uint64_t expected,
                                   uint64_t desired) {
  RmaAtomic atomic;
  atomic.op = RmaAtomicOp::cswap;
  atomic.width = width;
  atomic.operand = desired;
  atomic.compare = expected;
  return apply_rma_atomic(base_ + word_offset, atomic);
}

bool MappedWords::native(size_t word_offset, uint8_t width, RmaAtomicOp op, uint64_t operand,
                         uint64_t* fetch) {
  if (op == RmaAtomicOp::cswap) return false;
  RmaAtomic atomic;
  atomic.op = op;
  atomic.width = width;
  atomic.operand = operand;
  const uint64_t old = apply_rma_atomic(base_ + word_offset, atomic);
  if (fetch != nullptr) *fetch = old;
  return true;
}

}  // namespace grove::rma
