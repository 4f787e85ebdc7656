#pragma once
// Element-wise atomic updates of window memory, the same on both access
// paths: an element is updated through its aligned containing word (4 bytes
// for elements of 1, 2 and 4 bytes, 8 for 8-byte elements) with a
// compare-and-swap loop, or with one native atomic where one exists (integer
// sum, band, bor, bxor on 4- and 8-byte elements). Compare-and-swap on a
// word is atomic against every other atomic on it, local or remote (UCX's
// shared-memory atomics are the same CPU instructions), so concurrent
// accumulates from every rank to one element never lose an update.
//
// Float operands combine as the collectives' reductions do (sched/reduce):
// the target's value is the left operand; compare_and_swap compares bits.

#include <cstddef>
#include <cstdint>

#include "grove/types.hpp"
#include "transport/transport.hpp"

namespace grove::rma {

// Access to one aligned word: loads and compare-and-swaps that complete
// before they return.
class WordAccess {
 public:
  virtual ~WordAccess() = default;
  virtual uint64_t load(size_t word_offset, uint8_t width) = 0;
  // Returns the word's previous value; it was replaced iff that equals `expected`.
  virtual uint64_t compare_swap(size_t word_offset, uint8_t width, uint64_t expected,
                                uint64_t desired) = 0;
  // A native fetching (fetch != null) or posted atomic; false when the path
  // has none for `op`, and the caller falls back to compare_swap.
  virtual bool native(size_t word_offset, uint8_t width, RmaAtomicOp op, uint64_t operand,
                      uint64_t* fetch) = 0;
};

// The word that holds element `byte_offset` of `type`, and where in it.
struct WordSpot {
  size_t word_offset;
  uint8_t width;
  uint8_t shift;  // byte offset of the element inside the word
};
WordSpot word_spot(size_t byte_offset, Datatype type);

// The native atomic that implements `op` on `type`, if any (integer
// sum/band/bor/bxor on 4- and 8-byte elements).
bool native_op(ReduceOp op, Datatype type, RmaAtomicOp* out);

// element = element op operand; the previous element into `old` if not null.
void combine(WordAccess& access, size_t byte_offset, Datatype type, ReduceOp op,
             const std::byte* operand, std::byte* old);

// If element == compare (bitwise) then element = desired; the previous
// element into `old`.
void compare_and_swap(WordAccess& access, size_t byte_offset, Datatype type,
                      const std::byte* compare, const std::byte* desired, std::byte* old);

// WordAccess on memory of this process (a mapped target).
class MappedWords final : public WordAccess {
 public:
  explicit MappedWords(std::byte* base) : base_(base) {}
  uint64_t load(size_t word_offset, uint8_t width) override;
  uint64_t compare_swap(size_t word_offset, uint8_t width, uint64_t expected,
                        uint64_t desired) override;
  bool native(size_t word_offset, uint8_t width, RmaAtomicOp op, uint64_t operand,
              uint64_t* fetch) override;

 private:
  std::byte* base_;
};

}  // namespace grove::rma
