#pragma once
// Allgather: every rank contributes block_bytes; every rank ends with all N
// blocks in rank order. Algorithms (their costs in docs/models.md):
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
//                       the two-tree shape of the fence (docs/fence.md) without its
//                       fault handling
//   shm       the shared-memory engine (blocking calls only)
//   hier      per host, then among host leaders (blocking calls only)
//   auto      selection (coll/select.hpp)
// Every algorithm handles any size (neighbor_exchange: even sizes and 1),
// 0 bytes (an empty schedule) and in place.

#include <cstddef>
#include <string>

#include "coll/algorithm.hpp"
#include "coll/select.hpp"
#include "sched/schedule.hpp"

namespace grove::coll {

struct AllgatherArgs {
  int rank = 0;
  int size = 1;
  size_t block_bytes = 0;
  // The own block is already in the output at rank * block_bytes, and the
  // input buffer is not used.
  bool in_place = false;
  AlgorithmSpec algorithm;  // "auto" is resolved
};

// The radices of the two trees (parameters rollup_radix, default 64, and
// release_radix, default 4), shared by allgather, allgatherv and the fence.
int rollup_radix();
int release_radix();

// Selection's view: bytes = each rank's block, total = all N blocks.
CallFacts facts(const AllgatherArgs& args);
// The resolved algorithm with the parameters it reads, for the wire stamp
// and the schedule cache: "gather_bcast(rollup=64,release=4)", else the
// canonical spec.
std::string describe_allgather(const AlgorithmSpec& resolved);

// One rank's schedule. Throws grove::Error(invalid_argument) for bad
// arguments, including an algorithm the size does not allow.
sched::Schedule build_allgather(const AllgatherArgs& args);

}  // namespace grove::coll
