#pragma once
// Gather: rank i contributes block_bytes; the root's output ends with all N
// blocks in rank order. Algorithms (MODELS.md §2, §3):
//
//   flat      every rank sends to the root directly
//   binomial  each rank sends its whole subtree's blocks in one message
//             (lgp α + n(p-1)/p β)
//   kary:K    the same over a K-ary tree (heap layout); its subtrees are not
//             contiguous rank ranges, so the root unpacks through scratch

#include <cstddef>

#include "sched/schedule.hpp"

namespace grove::coll {

struct GatherArgs {
  int rank = 0;
  int size = 1;
  int root = 0;
  size_t block_bytes = 0;
};

sched::Schedule gather_flat(const GatherArgs& args);
sched::Schedule gather_binomial(const GatherArgs& args);
sched::Schedule gather_kary(const GatherArgs& args, int radix);

}  // namespace grove::coll
