#pragma once
// Allgatherv: rank i contributes counts[i] bytes (possibly zero); every rank
// ends with rank i's block at offsets[i] of its output. Algorithms:
//
//   ring          N-1 steps to the right neighbour; empty blocks are not sent
//   gather_bcast  k-ary gather to rank 0 at radix rollup_radix, then a k-ary
//                 bcast at radix release_radix (see allgather.hpp). When the
//                 blocks do not tile the output in rank order (gaps or another
//                 order), rank 0 packs them and every rank unpacks, so bytes
//                 between blocks are never written.

#include <cstddef>
#include <vector>

#include "sched/schedule.hpp"

namespace grove::coll {

struct AllgathervArgs {
  int rank = 0;
  int size = 1;
  std::vector<size_t> counts;   // bytes from each rank
  std::vector<size_t> offsets;  // where each rank's block goes; empty: packed in rank order
  // The own block is already at offsets[rank] of the output.
  bool in_place = false;
};

sched::Schedule allgatherv_ring(const AllgathervArgs& args);
sched::Schedule allgatherv_gather_bcast(const AllgathervArgs& args, int rollup_radix,
                                        int release_radix);

}  // namespace grove::coll
