#pragma once
// Gather: rank i contributes block_bytes; the root's output ends with all N
// blocks in rank order. Algorithms (names as in `gather_algorithm`;
// costs in docs/models.md):
//
//   flat      every rank sends to the root directly
//   binomial  each rank sends its whole subtree's blocks in one message
//             (lgp α + n(p-1)/p β)
//   kary:K    the same over a K-ary tree (heap layout); its subtrees are not
//             contiguous rank ranges, so the root unpacks through scratch
//   shm       the shared-memory engine (blocking calls only)
//   auto      selection (coll/select.hpp)
// Every algorithm handles any size and root and 0 bytes (an empty schedule).

#include <cstddef>

#include "coll/algorithm.hpp"
#include "coll/select.hpp"
#include "sched/schedule.hpp"

namespace grove::coll {

struct GatherArgs {
  int rank = 0;
  int size = 1;
  int root = 0;
  size_t block_bytes = 0;
  AlgorithmSpec algorithm;  // "auto" is resolved
};

// Selection's view: bytes = each rank's block, total = all N blocks.
CallFacts facts(const GatherArgs& args);

sched::Schedule build_gather(const GatherArgs& args);

}  // namespace grove::coll
