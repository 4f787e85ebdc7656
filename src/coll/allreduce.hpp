#pragma once
// Allreduce: every rank's output ends with op over every rank's input, count
// elements of dtype.
//
// Algorithms (names as in `allreduce_algorithm`; costs in docs/models.md):
//   recursive_doubling  log2 steps exchanging the whole vector with v ^ 2^t;
//                       grouping S_t(v) = S_{t-1}(v) ⊕ S_{t-1}(v ^ 2^t),
//                       lowest bit first, from the fold's leaves x(2v) ⊕
//                       x(2v+1) (v < rem) or x(v + rem)
//   ring                reduce-scatter around the ring, then ring allgather.
//                       Chunk c (N chunks, element counts differing by at
//                       most one) is folded from rank c onward:
//                       ((x(c) ⊕ x(c+1)) ⊕ x(c+2)) ... ⊕ x(c-1)
//   rabenseifner        reduce-scatter by recursive halving, then allgather
//                       by recursive doubling (coll/halving_steps.hpp)
//   shm       the shared-memory engine (blocking calls only)
//   hier      per host, then among host leaders (blocking calls only)
//   auto      selection (coll/select.hpp)
// Non-powers of two fold ranks in pairs before and hand the result back
// after (coll/layout.hpp, Fold). Every rank gets the same bits.
//
// In place: the input is already in the output (the input is not used).

#include <cstddef>

#include "coll/algorithm.hpp"
#include "coll/select.hpp"
#include "grove/types.hpp"
#include "sched/schedule.hpp"

namespace grove::coll {

struct AllreduceArgs {
  int rank = 0;
  int size = 1;
  size_t count = 0;  // elements
  Datatype dtype = Datatype::uint8;
  ReduceOp op = ReduceOp::sum;
  bool in_place = false;
  AlgorithmSpec algorithm;
};

// Selection's view: bytes = total = the vector, count = its elements.
CallFacts facts(const AllreduceArgs& args);

sched::Schedule build_allreduce(const AllreduceArgs& args);

}  // namespace grove::coll
