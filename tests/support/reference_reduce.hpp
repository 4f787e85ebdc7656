#pragma once
// The reference of one element of a reduction, written plainly for the
// tests to compare grove's kernels and algorithms against (exact bits):
// integers wrap (arithmetic in the unsigned type, at least unsigned int, so
// int8 and int16 products do not overflow a promoted int); min and max of
// floats follow `b < a ? b : a` / `a < b ? b : a`; bitwise ops are for
// integers only (anything else throws std::logic_error).

#include <stdexcept>
#include <type_traits>

#include "grove/types.hpp"

namespace grove::testing {

template <class T>
T reference_reduce(ReduceOp op, T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
    const W ua = static_cast<U>(a);
    const W ub = static_cast<U>(b);
    switch (op) {
      case ReduceOp::sum:
        return static_cast<T>(ua + ub);
      case ReduceOp::prod:
        return static_cast<T>(ua * ub);
      case ReduceOp::min:
        return b < a ? b : a;
      case ReduceOp::max:
        return a < b ? b : a;
      case ReduceOp::band:
        return static_cast<T>(a & b);
      case ReduceOp::bor:
        return static_cast<T>(a | b);
      case ReduceOp::bxor:
        return static_cast<T>(a ^ b);
    }
  } else {
    switch (op) {
      case ReduceOp::sum:
        return a + b;
      case ReduceOp::prod:
        return a * b;
      case ReduceOp::min:
        return b < a ? b : a;
      case ReduceOp::max:
        return a < b ? b : a;
      default:
        break;
    }
  }
  throw std::logic_error("reference_reduce: no such operation for this type");
}

}  // namespace grove::testing
