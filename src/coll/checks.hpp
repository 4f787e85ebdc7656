#pragma once
// Argument checks shared by the schedule builders of src/coll. Each throws
// grove::Error(invalid_argument) whose message names the collective and the
// bad value.

#include <string_view>

#include "coll/algorithm.hpp"
#include "grove/types.hpp"

namespace grove::coll {

// size >= 1 and 0 <= rank < size.
void check_rank(std::string_view collective, int rank, int size);
// Also 0 <= root < size.
void check_root(std::string_view collective, int rank, int size, int root);
// The spec was parsed for this collective.
void check_spec(std::string_view collective, const AlgorithmSpec& spec);
// The operation is defined on the type (bitwise operations need integers).
void check_reduction(std::string_view collective, Datatype type, ReduceOp op);

}  // namespace grove::coll
