#include "grove/types.hpp"

namespace grove {

size_t datatype_size(Datatype type) {
  switch (type) {
    case Datatype::int8:
    case Datatype::uint8:
      return 1;
    case Datatype::int16:
    case Datatype::uint16:
      return 2;
    case Datatype::int32:
    case Datatype::uint32:
    case Datatype::float32:
      return 4;
    case Datatype::int64:
    case Datatype::uint64:
    case Datatype::float64:
      return 8;
  }
  return 1;
}

std::string_view datatype_name(Datatype type) {
  switch (type) {
    case Datatype::int8:
      return "int8";
    case Datatype::int16:
      return "int16";
    case Datatype::int32:
      return "int32";
    case Datatype::int64:
      return "int64";
    case Datatype::uint8:
      return "uint8";
    case Datatype::uint16:
      return "uint16";
    case Datatype::uint32:
      return "uint32";
    case Datatype::uint64:
      return "uint64";
    case Datatype::float32:
      return "float32";
    case Datatype::float64:
      return "float64";
  }
  return "?";
}

std::string_view reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
      return "sum";
    case ReduceOp::prod:
      return "prod";
    case ReduceOp::min:
      return "min";
    case ReduceOp::max:
      return "max";
    case ReduceOp::band:
      return "band";
    case ReduceOp::bor:
      return "bor";
    case ReduceOp::bxor:
      return "bxor";
  }
  return "?";
}

bool reduce_op_valid(ReduceOp op, Datatype type) {
  const bool bitwise = op == ReduceOp::band || op == ReduceOp::bor || op == ReduceOp::bxor;
  const bool floating = type == Datatype::float32 || type == Datatype::float64;
  return !(bitwise && floating);
}

}  // namespace grove
