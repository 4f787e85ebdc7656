#pragma once
// The argument checks of the collectives' front ends (api/*_call.cpp). Each
// throws grove::Error(invalid_argument) "rank R: COLL: <cause>" before
// anything is sent.

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "api/comm_state.hpp"
#include "grove/types.hpp"

namespace grove::detail {

// "root X is out of range for N ranks".
void check_root(const CommState& comm, std::string_view collective, int root);
// Names the buffer and both lengths.
void check_length(const CommState& comm, std::string_view collective, std::string_view buffer,
                  size_t have, size_t need);
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
