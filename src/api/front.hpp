#pragma once
// Helpers shared by the front ends of scatter, gather, allgather(v),
// alltoall(v), reduce, allreduce and reduce-scatter (src/coll/*_call.cpp),
// next to the common ones in coll/call.hpp.

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "api/call.hpp"
#include "grove/types.hpp"

namespace grove::detail {

// The wire stamp of an algorithm described with the parameters it reads
// ("gather_bcast(rollup=64,release=4)"): the same hash AlgorithmSpec::stamp
// gives its canonical text, so peers that read different parameters differ.
uint8_t stamp_for(std::string_view collective, std::string_view described);

// Throws grove::Error(invalid_argument) naming the collective and the cause.
void check_disjoint(const CommState& comm, std::string_view collective,
                    std::span<const std::byte> send, std::span<const std::byte> recv);
void check_multiple(const CommState& comm, std::string_view collective, std::string_view what,
                    size_t bytes, size_t unit, std::string_view unit_name);
void check_op(const CommState& comm, std::string_view collective, Datatype type, ReduceOp op);
void check_count_list(const CommState& comm, std::string_view collective, std::string_view what,
                      size_t have);
// Every block [offsets[i], offsets[i] + counts[i]) inside `length` bytes and
// no two non-empty blocks overlapping (offsets empty: packed in order).
void check_blocks(const CommState& comm, std::string_view collective, std::string_view buffer,
                  std::span<const size_t> counts, std::span<const size_t> offsets, size_t length);

}  // namespace grove::detail
