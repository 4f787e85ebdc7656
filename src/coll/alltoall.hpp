#pragma once
// Alltoall: block j of rank i's input goes to rank j, landing at block i of
// its output; every block is block_bytes. Algorithms (costs in docs/models.md):
//
//   linear    every receive and send posted at once, peers in the order
//             r+1, r+2, ... so no rank is everyone's first target
//   pairwise  step i = 1 .. N-1 sends to r+i and receives from r-i, with at
//             most P sends and, separately, P receives incomplete (the
//             posting depth: docs/selection.md)
//   bruck     ceil(log2 N) steps; step k sends, packed, every block whose
//             index (relative to the rank) has bit k set to r + 2^k. Meant
//             for small blocks: it moves (N/2) log2 N blocks per rank
//
//   shm       the shared-memory engine (blocking calls only)
//   auto      selection (coll/select.hpp)
//
// In place: the output holds the blocks to send and is overwritten; the
// schedule first copies it to scratch.

#include <cstddef>
#include <cstdint>
#include <optional>

#include "coll/algorithm.hpp"
#include "coll/select.hpp"
#include "sched/schedule.hpp"

namespace grove::coll {

struct AlltoallArgs {
  int rank = 0;
  int size = 1;
  size_t block_bytes = 0;
  bool in_place = false;
  AlgorithmSpec algorithm;  // "auto" is resolved
  // pairwise: the posting depth P; 0: see pairwise_depth.
  uint32_t posts = 0;
};

// The parameter alltoall_posts ("auto" or a count >= 1), shared with
// alltoallv: nullopt for auto.
std::optional<uint32_t> alltoall_posts_setting();
// The depth an automatic pairwise call runs with: the explicit setting
// (capped at N), or the posts= of the selection tables' first pairwise row
// for peer_bytes to each of N ranks and total_bytes in all
// (coll/posting_depth.hpp). The depth only limits this rank's own messages:
// ranks may differ.
uint32_t alltoall_posting_depth(int size, uint64_t peer_bytes, uint64_t total_bytes);
// The depth of one pairwise schedule (alltoall and alltoallv): `posts` if
// given (> 0), else the explicit alltoall_posts setting, else the resolved
// spec's posts=, else N; capped at N.
uint32_t pairwise_depth(int size, uint32_t posts, const AlgorithmSpec& spec);

// Selection's view: bytes = the block to each peer, total = all N blocks.
CallFacts facts(const AlltoallArgs& args);

sched::Schedule build_alltoall(const AlltoallArgs& args);

}  // namespace grove::coll
