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

// The checks a repeated call makes are inline compares; what throws is out
// of line and cold (the message is formatted only then).
[[noreturn, gnu::cold]] void fail_root(const CommState& comm, std::string_view collective,
                                       int root);
[[noreturn, gnu::cold]] void fail_length(const CommState& comm, std::string_view collective,
                                         std::string_view buffer, size_t have, size_t need);
[[noreturn, gnu::cold]] void fail_disjoint(const CommState& comm, std::string_view collective);
[[noreturn, gnu::cold]] void fail_multiple(const CommState& comm, std::string_view collective,
                                           std::string_view what, size_t bytes, size_t unit,
                                           std::string_view unit_name);
[[noreturn, gnu::cold]] void fail_op(const CommState& comm, std::string_view collective,
                                     Datatype type, ReduceOp op);

// "root X is out of range for N ranks".
inline void check_root(const CommState& comm, std::string_view collective, int root) {
  if (root < 0 || root >= comm.size()) [[unlikely]]
    fail_root(comm, collective, root);
}
// Names the buffer and both lengths.
inline void check_length(const CommState& comm, std::string_view collective,
                         std::string_view buffer, size_t have, size_t need) {
  if (have != need) [[unlikely]]
    fail_length(comm, collective, buffer, have, need);
}
// Throws grove::Error(invalid_argument) naming the collective and the cause.
inline void check_disjoint(const CommState& comm, std::string_view collective,
                           std::span<const std::byte> send, std::span<const std::byte> recv) {
  if (send.empty() || recv.empty()) return;
  const std::byte* s = send.data();
  const std::byte* r = recv.data();
  if (s < r + recv.size() && r < s + send.size()) [[unlikely]]
    fail_disjoint(comm, collective);
}
inline void check_multiple(const CommState& comm, std::string_view collective,
                           std::string_view what, size_t bytes, size_t unit,
                           std::string_view unit_name) {
  if (unit == 0 || bytes % unit != 0) [[unlikely]]
    fail_multiple(comm, collective, what, bytes, unit, unit_name);
}
// check_multiple by the size of `type` (named as the type); returns the
// number of elements.
inline size_t check_elements(const CommState& comm, std::string_view collective,
                             std::string_view what, size_t bytes, Datatype type) {
  const size_t unit = datatype_size(type);
  if (bytes % unit != 0) [[unlikely]]
    fail_multiple(comm, collective, what, bytes, unit, datatype_name(type));
  return bytes / unit;
}
inline void check_op(const CommState& comm, std::string_view collective, Datatype type,
                     ReduceOp op) {
  if (!reduce_op_valid(op, type)) [[unlikely]]
    fail_op(comm, collective, type, op);
}
void check_count_list(const CommState& comm, std::string_view collective, std::string_view what,
                      size_t have);
// Every block [offsets[i], offsets[i] + counts[i]) inside `length` bytes and
// no two non-empty blocks overlapping (offsets empty: packed in order).
void check_blocks(const CommState& comm, std::string_view collective, std::string_view buffer,
                  std::span<const size_t> counts, std::span<const size_t> offsets, size_t length);

}  // namespace grove::detail
