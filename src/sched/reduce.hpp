#pragma once
// Elementwise reduction of two byte ranges, the body of a schedule's reduce
// step: inout[i] = op(inout[i], in[i]) for every element. The operand order
// matters only for floating point (rounding) and is fixed: the element
// already in `inout` is the left operand.

#include <cstddef>

#include "grove/types.hpp"

namespace grove::sched {

// `bytes` must be a multiple of datatype_size(type); the op must satisfy
// reduce_op_valid(op, type). Either violation throws grove::Error
// (invalid_argument) naming the op, the type and the length. Overlapping
// ranges other than inout == in are not allowed.
void reduce_bytes(ReduceOp op, Datatype type, std::byte* inout, const std::byte* in, size_t bytes);

}  // namespace grove::sched
