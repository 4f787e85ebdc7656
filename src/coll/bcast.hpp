#pragma once
// Broadcast: the root's `bytes` bytes reach every rank. In place: on every
// rank (the root included) the data lives in the output buffer, bytes long;
// no input buffer and no scratch is used.
//
// Algorithms (names as in `bcast_algorithm`; each declared with its cost in
// bcast.cpp):
//   flat               the root sends to every rank
//   chain              each rank forwards the whole message to the next
//   pipeline[:seg=S]   chain in segments of S bytes (default: a selection row,
//                      else parameter bcast_segment_size), up to 64 segments
//                      in flight per link
//   binary, kary:K     k-ary heap tree (binary = kary:2)
//   binomial, knomial:K
//   scatter_allgather  binomial scatter of ceil(bytes/size)-byte blocks, then
//                      a ring allgather (ranks skip blocks they already have)
//   shm                the shared-memory engine (blocking calls only)
//   hier               per host, then among host leaders (blocking calls only)
//   auto               selection (coll/select.hpp)
// Every algorithm handles any root, any size and 0 bytes (an empty schedule).

#include <cstddef>
#include <cstdint>

#include "coll/algorithm.hpp"
#include "coll/select.hpp"
#include "sched/schedule.hpp"

namespace grove::coll {

struct BcastArgs {
  int rank = 0;
  int size = 1;
  int root = 0;
  size_t bytes = 0;
  AlgorithmSpec algorithm;  // "auto" and a missing pipeline segment are resolved
};

// Selection's view: bytes = the message.
CallFacts facts(const BcastArgs& args);

// One rank's schedule. Throws grove::Error(invalid_argument) for bad
// arguments (size < 1, rank or root out of range, a spec of another
// collective, an algorithm without a schedule). Cost: O(this rank's steps);
// O(size) only where the rank itself has O(size) messages (flat root, ring
// allgather).
sched::Schedule build_bcast(const BcastArgs& args);

// The shape its schedule declares (sched::Symmetry::shape): ranks of the
// same shape run one schedule relabelled. 0 where the schedule declares
// none. Cost: O(log size), no schedule built (the simulator sorts every
// rank by it).
uint64_t bcast_shape(const BcastArgs& args);

}  // namespace grove::coll
