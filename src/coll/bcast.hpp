#pragma once
// Broadcast: the root's `bytes` bytes reach every rank. In place: on every
// rank (the root included) the data lives in the output buffer, bytes long;
// no input buffer and no scratch is used.
//
// Algorithms (names as in `bcast_algorithm`):
//   flat               the root sends to every rank
//   chain              each rank forwards the whole message to the next
//   pipeline[:seg=S]   chain in segments of S bytes (default: parameter
//                      bcast_segment_size), up to 64 segments in flight per link
//   binary, kary:K     k-ary heap tree (binary = kary:2)
//   binomial, knomial:K
//   scatter_allgather  binomial scatter of ceil(bytes/size)-byte blocks, then
//                      a ring allgather (ranks skip blocks they already have)
//   auto               choose_bcast_auto
// Every algorithm handles any root, any size and 0 bytes (an empty schedule).

#include <cstddef>
#include <cstdint>

#include "coll/algorithm.hpp"
#include "sched/schedule.hpp"

namespace grove::coll {

struct BcastArgs {
  int rank = 0;
  int size = 1;
  int root = 0;
  size_t bytes = 0;
  AlgorithmSpec algorithm;  // "auto" and a missing pipeline segment are resolved
};

// Parameter bcast_segment_size (default 64 KiB).
uint64_t bcast_segment_size();

// The built-in rule until the model layer exists, from MPICH's bcast
// thresholds (Thakur, Rabenseifner & Gropp 2005; /work/shared/MODELS.md §2):
// binomial below 12 KiB (12288 B) or below 8 ranks, else scatter_allgather.
AlgorithmSpec choose_bcast_auto(int size, size_t bytes);

// What build_bcast will actually run: `auto` replaced by its choice, the
// pipeline's segment filled in from the parameter. Use this for the wire
// stamp and the schedule cache key.
AlgorithmSpec resolve_bcast(const AlgorithmSpec& spec, int size, size_t bytes);

// One rank's schedule. Throws grove::Error(invalid_argument) for bad
// arguments (size < 1, rank or root out of range, a spec of another
// collective). Cost: O(this rank's steps); O(size) only where the rank
// itself has O(size) messages (flat root, ring allgather).
sched::Schedule build_bcast(const BcastArgs& a);

}  // namespace grove::coll
