#pragma once
// What a benchmark cell means for each collective, shared by grove's drivers
// and the peer drivers (bench/peers/) so that a cell "allgather, 4096 bytes"
// moves the same bytes in every library. Header-only and free of grove's
// library so the MPI and Gloo peers can include it.
//
// Conventions (OSU's, so numbers can be set beside OSU tables):
// - `whole`: `bytes` is the whole buffer (bcast; allreduce and reduce: the
//   vector every rank contributes).
// - `block`: `bytes` is one rank's block (scatter, gather, allgather,
//   alltoall, reduce_scatter: the block each rank ends with; allgatherv and
//   alltoallv with equal counts).
// - Reductions are float32 sums; element values are small integers
//   (pattern bytes), so every summation order gives the exact same floats.
// - The root of rooted collectives is rank 0.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace grove::bench::cells {

enum class Shape { none, whole, block };

struct Spec {
  std::string_view name;
  Shape shape;
  size_t element_size;  // bytes per element; sizes round up to a multiple
  bool reduction;       // float32 sum
  bool rooted;          // root is rank 0
};

// Table order of the suite.
inline constexpr std::array<Spec, 11> kSpecs{{
    {"bcast", Shape::whole, 1, false, true},
    {"scatter", Shape::block, 1, false, true},
    {"gather", Shape::block, 1, false, true},
    {"allgather", Shape::block, 1, false, false},
    {"alltoall", Shape::block, 1, false, false},
    {"barrier", Shape::none, 1, false, false},
    {"allreduce", Shape::whole, 4, true, false},
    {"reduce", Shape::whole, 4, true, true},
    {"reduce_scatter", Shape::block, 4, true, false},
    {"allgatherv", Shape::block, 1, false, false},
    {"alltoallv", Shape::block, 1, false, false},
}};

inline std::optional<Spec> find_spec(std::string_view name) {
  for (const Spec& s : kSpecs) {
    if (s.name == name) return s;
  }
  return std::nullopt;
}

// The bytes a cell of nominal size `bytes` moves: 0 for barrier, else
// rounded up to whole elements (a float32 reduction of 1 byte is 4 bytes).
inline size_t round_bytes(const Spec& spec, size_t bytes) {
  if (spec.shape == Shape::none) return 0;
  return (bytes + spec.element_size - 1) / spec.element_size * spec.element_size;
}

// A deterministic byte pattern, so every rank can compute what another
// rank's buffer must hold. Same function as bench/suite/driver.hpp's.
inline std::byte pattern(int rank, size_t offset, uint32_t generation) {
  uint64_t x = (static_cast<uint64_t>(rank) << 40) ^ (offset * 0x9e3779b97f4a7c15ull) ^
               (static_cast<uint64_t>(generation) * 0xbf58476d1ce4e5b9ull);
  x ^= x >> 29;
  return static_cast<std::byte>(x & 0xff);
}

// Reduction input of `rank` at element `index`: a pattern byte as a float.
inline float pattern_float(int rank, size_t index, uint32_t generation) {
  return static_cast<float>(std::to_integer<int>(pattern(rank, index, generation)));
}

// The exact float32 sum over `ranks` ranks of element `index` (at most
// 255 * ranks, exact in float32 for any order while ranks < 65793).
inline float expected_sum(int ranks, size_t index, uint32_t generation) {
  float sum = 0;
  for (int r = 0; r < ranks; ++r)
    sum += pattern_float(r, index, generation);
  return sum;
}

}  // namespace grove::bench::cells
