#include "coll/checks.hpp"

#include <fmt/format.h>

#include "grove/error.hpp"

namespace grove::coll {

void check_rank(std::string_view collective, int rank, int size) {
  if (size < 1 || rank < 0 || rank >= size) {
    throw Error(Errc::invalid_argument,
                fmt::format("{}: rank {} and size {} are inconsistent (need 0 <= rank < size)",
                            collective, rank, size));
  }
}

void check_root(std::string_view collective, int rank, int size, int root) {
  check_rank(collective, rank, size);
  if (root < 0 || root >= size) {
    throw Error(Errc::invalid_argument,
                fmt::format("{}: root {} is outside [0, {})", collective, root, size));
  }
}

void check_spec(std::string_view collective, const AlgorithmSpec& spec) {
  if (spec.collective != collective) {
    throw Error(Errc::invalid_argument, fmt::format("{}: algorithm '{}' belongs to collective '{}'",
                                                    collective, spec.to_string(), spec.collective));
  }
}

void check_reduction(std::string_view collective, Datatype type, ReduceOp op) {
  if (!reduce_op_valid(op, type)) {
    throw Error(Errc::invalid_argument,
                fmt::format("{}: operation {} is not defined on {} (bitwise operations need an "
                            "integer type)",
                            collective, reduce_op_name(op), datatype_name(type)));
  }
}

}  // namespace grove::coll
