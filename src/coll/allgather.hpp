#pragma once
// Allgather: every rank contributes block_bytes; every rank ends with all N
// blocks in rank order. Algorithms (MODELS.md §2 for their costs):
//
//   ring                N-1 steps to the right neighbour; (p-1)α + n(p-1)/p β
//   recursive_doubling  log2 steps exchanging doubling ranges; non-powers of
//                       two fold the first 2*rem ranks in pairs (coll/layout.hpp)
//                       and hand the result back at the end
//   bruck               ceil(log2 N) steps, distance 2^k, no final rotation:
//                       both ends name the blocks absolutely and split a
//                       range that wraps into two messages
//   neighbor_exchange   N/2 steps exchanging pairs of blocks with alternate
//                       neighbours (Chen et al.); even N only
//   gather_bcast        k-ary gather to rank 0 at radix rollup_radix, then a
//                       k-ary bcast of the whole result at radix release_radix:
//                       the two-tree shape of the fence (seed 000) without its
//                       fault handling

#include <cstddef>

#include "sched/schedule.hpp"

namespace grove::coll {

struct AllgatherArgs {
  int rank = 0;
  int size = 1;
  size_t block_bytes = 0;
  // The own block is already in the output at rank * block_bytes, and the
  // input buffer is not used.
  bool in_place = false;
};

sched::Schedule allgather_ring(const AllgatherArgs& args);
sched::Schedule allgather_recursive_doubling(const AllgatherArgs& args);
sched::Schedule allgather_bruck(const AllgatherArgs& args);
sched::Schedule allgather_neighbor_exchange(const AllgatherArgs& args);
sched::Schedule allgather_gather_bcast(const AllgatherArgs& args, int rollup_radix,
                                       int release_radix);

}  // namespace grove::coll
