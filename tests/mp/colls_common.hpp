#pragma once
// Shared by the multi-process collectives driver (tests/mp/colls.cpp):
// deterministic data every rank can recompute, failure reporting, and
// reduction operands whose result is exact in any order.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "grove/grove.hpp"
#include "support/reference_reduce.hpp"

namespace colls {

using grove::Datatype;
using grove::ReduceOp;

// Byte i of what `rank` contributes in case `salt`.
inline std::byte pattern(int rank, size_t i, uint32_t salt) {
  uint64_t x = (uint64_t{static_cast<uint32_t>(rank)} << 40) ^ (uint64_t{i} * 0x9E3779B97F4A7C15u) ^
               (uint64_t{salt} << 21);
  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9u;
  x ^= x >> 32;
  return static_cast<std::byte>(x & 0xff);
}

inline std::vector<std::byte> pattern_bytes(int rank, size_t length, uint32_t salt,
                                            size_t start = 0) {
  std::vector<std::byte> out(length);
  for (size_t i = 0; i < length; ++i)
    out[i] = pattern(rank, start + i, salt);
  return out;
}

// Throws naming the case and the first differing byte.
inline void expect_bytes(const std::string& what, int rank, const std::byte* got,
                         const std::byte* want, size_t length) {
  if (length == 0 || std::memcmp(got, want, length) == 0) return;
  size_t i = 0;
  while (got[i] == want[i])
    ++i;
  throw std::runtime_error(fmt::format("{}: rank {} byte {} is {:#04x}, expected {:#04x}", what,
                                       rank, i, static_cast<int>(got[i]),
                                       static_cast<int>(want[i])));
}

inline void expect_bytes(const std::string& what, int rank, const std::vector<std::byte>& got,
                         const std::vector<std::byte>& want) {
  if (got.size() != want.size()) {
    throw std::runtime_error(
        fmt::format("{}: rank {} has {} bytes, expected {}", what, rank, got.size(), want.size()));
  }
  expect_bytes(what, rank, got.data(), want.data(), got.size());
}

inline std::vector<int> roots_for(int size) {
  if (size <= 8) {
    std::vector<int> all(static_cast<size_t>(size));
    for (int r = 0; r < size; ++r)
      all[static_cast<size_t>(r)] = r;
    return all;
  }
  return {0, 1, size / 2, size - 1};
}

// ---- reductions whose result does not depend on the order ----

// Element i of rank r's vector. Integers: anything (wrap-around arithmetic
// is associative). Floats: small integers for sums, powers of two for
// products, so every grouping is exact.
template <class T>
T operand(int rank, size_t i, ReduceOp op, uint32_t salt) {
  // Cheap: the big cases hold a million elements on every rank.
  uint64_t x = (uint64_t{static_cast<uint32_t>(rank)} + 1) * 0x9E3779B97F4A7C15u ^
               (uint64_t{i} + uint64_t{salt} * 0x632BE59BD9B4E019u) * 0xBF58476D1CE4E5B9u;
  x ^= x >> 31;
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(x);
  } else {
    if (op == ReduceOp::prod) {
      static constexpr T kFactors[] = {1, -1, 2, 0.5};
      return kFactors[x % 4];
    }
    return static_cast<T>(static_cast<int>(x % 7) - 3);
  }
}

template <class T>
std::vector<std::byte> operand_bytes(int rank, size_t count, ReduceOp op, uint32_t salt,
                                     size_t first = 0) {
  std::vector<std::byte> out(count * sizeof(T));
  for (size_t i = 0; i < count; ++i) {
    const T v = operand<T>(rank, first + i, op, salt);
    std::memcpy(out.data() + i * sizeof(T), &v, sizeof(T));
  }
  return out;
}

// op over ranks 0..size-1 of elements [first, first + count).
template <class T>
std::vector<std::byte> reduced_bytes(int size, size_t count, ReduceOp op, uint32_t salt,
                                     size_t first = 0) {
  std::vector<std::byte> out(count * sizeof(T));
  for (size_t i = 0; i < count; ++i) {
    T acc = operand<T>(0, first + i, op, salt);
    for (int r = 1; r < size; ++r)
      acc = grove::testing::reference_reduce(op, acc, operand<T>(r, first + i, op, salt));
    std::memcpy(out.data() + i * sizeof(T), &acc, sizeof(T));
  }
  return out;
}

// Calls f.template operator()<T>() for the C++ type of `type`.
template <class F>
auto with_type(Datatype type, F&& f) {
  switch (type) {
    case Datatype::int8:
      return f.template operator()<int8_t>();
    case Datatype::int16:
      return f.template operator()<int16_t>();
    case Datatype::int32:
      return f.template operator()<int32_t>();
    case Datatype::int64:
      return f.template operator()<int64_t>();
    case Datatype::uint8:
      return f.template operator()<uint8_t>();
    case Datatype::uint16:
      return f.template operator()<uint16_t>();
    case Datatype::uint32:
      return f.template operator()<uint32_t>();
    case Datatype::uint64:
      return f.template operator()<uint64_t>();
    case Datatype::float32:
      return f.template operator()<float>();
    case Datatype::float64:
      return f.template operator()<double>();
  }
  throw std::logic_error("no such type");
}

// Every valid (type, op) pair.
inline std::vector<std::pair<Datatype, ReduceOp>> type_op_pairs() {
  std::vector<std::pair<Datatype, ReduceOp>> out;
  for (ReduceOp op : {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max, ReduceOp::band,
                      ReduceOp::bor, ReduceOp::bxor}) {
    for (int t = 0; t <= static_cast<int>(Datatype::float64); ++t) {
      const auto type = static_cast<Datatype>(t);
      if (grove::reduce_op_valid(op, type)) out.emplace_back(type, op);
    }
  }
  return out;
}

}  // namespace colls
