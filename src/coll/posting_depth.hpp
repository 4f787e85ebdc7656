#pragma once
// The posting depth P of the pairwise alltoall: at most P sends, and
// independently at most P receives, incomplete at any time (docs/selection.md).
// An explicit setting is authoritative; `auto` applies the rule, held as the
// pairwise rows of the selection tables.

#include <cstdint>
#include <optional>
#include <string_view>

namespace grove::coll {

// The automatic rule, as the built-in table's pairwise rows give it
// (boundaries inclusive; the rows' first match, or a tuning file's):
//
//   if total_bytes <= 66000 or N <= 8:  P = N
//   else if peer_bytes <= 64 KiB:       P = min(N, 32)
//   else if peer_bytes <= 1 MiB:        P = min(N, 16)
//   else if peer_bytes <= 4 MiB:        P = N for N <= 16, otherwise 8
//   else if peer_bytes <= 8 MiB:        P = min(N, 4)
//   else:                               P = 4 for N <= 32, otherwise 1
//
// N = ranks (>= 1), peer_bytes = bytes to one peer, total_bytes = the whole
// send buffer. The result is in 1..N, and for fixed N it never grows as
// peer_bytes grows (with total_bytes = N * peer_bytes).
uint32_t auto_posting_depth(uint32_t ranks, uint64_t peer_bytes, uint64_t total_bytes);

// A setting is "auto" or a decimal count >= 1. Returns the explicit count,
// nullopt for "auto"; throws grove::Error(invalid_parameter) naming
// `param_name` for anything else.
std::optional<uint32_t> parse_posting_depth(std::string_view setting, std::string_view param_name);

// The depth to use: an explicit count as given (a count above N means
// "everything posted" and is capped at N, which changes nothing: there are
// never more than N transfers); `auto` by auto_posting_depth.
uint32_t resolve_posting_depth(std::optional<uint32_t> setting, uint32_t ranks, uint64_t peer_bytes,
                               uint64_t total_bytes);

}  // namespace grove::coll
