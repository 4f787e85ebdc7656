#pragma once
// An RMA atomic applied to memory of this process (a mapped target, or the
// test world's regions), with the semantics the Transport interface gives
// every backend's atomics: one aligned word of atomic.width bytes,
// sequentially consistent, the previous value returned.

#include <cstddef>
#include <cstdint>

#include "transport/transport.hpp"

namespace grove {

namespace detail {
template <class Word>
uint64_t apply_rma_atomic_word(std::byte* where, const RmaAtomic& atomic) {
  Word* word = reinterpret_cast<Word*>(where);
  const auto operand = static_cast<Word>(atomic.operand);
  switch (atomic.op) {
    case RmaAtomicOp::add:
      return __atomic_fetch_add(word, operand, __ATOMIC_SEQ_CST);
    case RmaAtomicOp::band:
      return __atomic_fetch_and(word, operand, __ATOMIC_SEQ_CST);
    case RmaAtomicOp::bor:
      return __atomic_fetch_or(word, operand, __ATOMIC_SEQ_CST);
    case RmaAtomicOp::bxor:
      return __atomic_fetch_xor(word, operand, __ATOMIC_SEQ_CST);
    case RmaAtomicOp::cswap: {
      auto expected = static_cast<Word>(atomic.compare);
      __atomic_compare_exchange_n(word, &expected, operand, false, __ATOMIC_SEQ_CST,
                                  __ATOMIC_SEQ_CST);
      return expected;
    }
  }
  return 0;
}
}  // namespace detail

inline uint64_t apply_rma_atomic(std::byte* where, const RmaAtomic& atomic) {
  return atomic.width == 4 ? detail::apply_rma_atomic_word<uint32_t>(where, atomic)
                           : detail::apply_rma_atomic_word<uint64_t>(where, atomic);
}

}  // namespace grove
