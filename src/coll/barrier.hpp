#pragma once
// Barrier: no rank's barrier completes before every rank has started it.
// Messages are 0 bytes; the schedule uses no buffer (Buffers may be empty).
//
// Algorithms (names as in `barrier_algorithm`):
//   dissemination  round r: send to rank + 2^r, receive from rank - 2^r
//                  (mod size); ceil(log2 size) rounds
//   knomial:K      fan-in to rank 0 up a k-nomial tree, then fan-out
//   flat           every rank to rank 0, then rank 0 to every rank
//   shm            the shared-memory engine (blocking calls only)
//   hier           per host, then among host leaders (blocking calls only)
//   auto           selection (coll/select.hpp)

#include "coll/algorithm.hpp"
#include "coll/select.hpp"
#include "sched/schedule.hpp"

namespace grove::coll {

struct BarrierArgs {
  int rank = 0;
  int size = 1;
  AlgorithmSpec algorithm;  // "auto" is resolved
};

// Selection's view: no bytes.
CallFacts facts(const BarrierArgs& args);

// One rank's schedule; size 1 gives an empty schedule. Throws
// grove::Error(invalid_argument) for bad arguments.
sched::Schedule build_barrier(const BarrierArgs& a);

}  // namespace grove::coll
