#pragma once
// Gather: rank i contributes block_bytes; the root's output ends with all N
// blocks in rank order. Algorithms (names as in `gather_algorithm`;
// MODELS.md §2, §3):
//
//   flat      every rank sends to the root directly
//   binomial  each rank sends its whole subtree's blocks in one message
//             (lgp α + n(p-1)/p β)
//   kary:K    the same over a K-ary tree (heap layout); its subtrees are not
//             contiguous rank ranges, so the root unpacks through scratch
//   auto      choose_gather_auto
// Every algorithm handles any size and root and 0 bytes (an empty schedule).

#include <cstddef>

#include "coll/algorithm.hpp"
#include "sched/schedule.hpp"

namespace grove::coll {

struct GatherArgs {
  int rank = 0;
  int size = 1;
  int root = 0;
  size_t block_bytes = 0;
  AlgorithmSpec algorithm;  // "auto" is resolved
};

// Binomial at every size: MPICH's only gather (MODELS.md §2).
AlgorithmSpec choose_gather_auto(int size, size_t block_bytes);
AlgorithmSpec resolve_gather(const AlgorithmSpec& spec, int size, size_t block_bytes);

sched::Schedule build_gather(const GatherArgs& args);

}  // namespace grove::coll
