#pragma once
// Element types and reduction operations of the public API.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace grove {

enum class Datatype : uint8_t {
  int8,
  int16,
  int32,
  int64,
  uint8,
  uint16,
  uint32,
  uint64,
  float32,
  float64,
};

enum class ReduceOp : uint8_t { sum, prod, min, max, band, bor, bxor };

size_t datatype_size(Datatype type);
std::string_view datatype_name(Datatype type);
std::string_view reduce_op_name(ReduceOp op);
// Bitwise operations are defined on integer types only.
bool reduce_op_valid(ReduceOp op, Datatype type);

template <class T>
constexpr Datatype datatype_of() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, int8_t>)
    return Datatype::int8;
  else if constexpr (std::is_same_v<U, int16_t>)
    return Datatype::int16;
  else if constexpr (std::is_same_v<U, int32_t>)
    return Datatype::int32;
  else if constexpr (std::is_same_v<U, int64_t>)
    return Datatype::int64;
  else if constexpr (std::is_same_v<U, uint8_t>)
    return Datatype::uint8;
  else if constexpr (std::is_same_v<U, uint16_t>)
    return Datatype::uint16;
  else if constexpr (std::is_same_v<U, uint32_t>)
    return Datatype::uint32;
  else if constexpr (std::is_same_v<U, uint64_t>)
    return Datatype::uint64;
  else if constexpr (std::is_same_v<U, float>)
    return Datatype::float32;
  else if constexpr (std::is_same_v<U, double>)
    return Datatype::float64;
  else
    static_assert(sizeof(U) == 0, "grove: no Datatype for this element type");
}

}  // namespace grove
