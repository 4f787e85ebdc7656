#pragma once
// Reduce-scatter with equal blocks: every rank's input holds N blocks of
// count elements; rank i's output ends with op over every rank's block i.
//
// Algorithms (names as in `reduce_scatter_algorithm`; costs in docs/models.md):
//   ring               N-1 steps around the ring; block c is folded from rank
//                      c + 1 onward: ((x(c+1) ⊕ x(c+2)) ⊕ ...) ⊕ x(c)
//   recursive_halving  log2 steps halving the block range with v ^ mask,
//                      highest mask first (coll/halving_steps.hpp); for
//                      non-powers of two ranks fold in pairs first and the
//                      even rank of a pair hands the odd one its block
//   auto      selection (coll/select.hpp)

#include <cstddef>

#include "coll/algorithm.hpp"
#include "coll/select.hpp"
#include "grove/types.hpp"
#include "sched/schedule.hpp"

namespace grove::coll {

struct ReduceScatterArgs {
  int rank = 0;
  int size = 1;
  size_t count = 0;  // elements per block (each rank's result)
  Datatype dtype = Datatype::uint8;
  ReduceOp op = ReduceOp::sum;
  AlgorithmSpec algorithm;
};

// Selection's view: bytes = one block, total = all N blocks, count = a block's elements.
CallFacts facts(const ReduceScatterArgs& args);

sched::Schedule build_reduce_scatter(const ReduceScatterArgs& args);

}  // namespace grove::coll
