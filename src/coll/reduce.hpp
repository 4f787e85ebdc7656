#pragma once
// Reduce: the root's output ends with op over every rank's input, count
// elements of dtype; other ranks' outputs are not used.
//
// Algorithms (names as in `reduce_algorithm`; costs in docs/models.md):
//   binomial     binomial tree toward the root; a rank folds in its children
//                nearest first: acc(v) = ((x(v) ⊕ acc(v+1)) ⊕ acc(v+2)) ⊕
//                acc(v+4) ... over relative ranks v (lgp(α+nβ+nγ))
//   rabenseifner reduce-scatter by recursive halving, then a binomial gather
//                of the chunks to the root (coll/halving_steps.hpp gives the
//                grouping); non-powers of two fold ranks in pairs first,
//                relative to the root so that the root always takes part
//   shm       the shared-memory engine (blocking calls only)
//   hier      per host, then among host leaders (blocking calls only)
//   auto      selection (coll/select.hpp)
//
// In place: the root's own contribution is already in its output (the input
// is not used there).

#include <cstddef>

#include "coll/algorithm.hpp"
#include "coll/select.hpp"
#include "grove/types.hpp"
#include "sched/schedule.hpp"

namespace grove::coll {

struct ReduceArgs {
  int rank = 0;
  int size = 1;
  int root = 0;
  size_t count = 0;  // elements
  Datatype dtype = Datatype::uint8;
  ReduceOp op = ReduceOp::sum;
  bool in_place = false;
  AlgorithmSpec algorithm;
};

// Selection's view: bytes = total = the vector, count = its elements.
CallFacts facts(const ReduceArgs& args);

// One rank's schedule; 0 elements give an empty schedule. Throws
// grove::Error(invalid_argument) for bad arguments.
sched::Schedule build_reduce(const ReduceArgs& args);

}  // namespace grove::coll
