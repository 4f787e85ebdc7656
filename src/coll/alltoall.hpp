#pragma once
// Alltoall: block j of rank i's input goes to rank j, landing at block i of
// its output; every block is block_bytes. Algorithms (MODELS.md §2, §3):
//
//   linear    every receive and send posted at once, peers in the order
//             r+1, r+2, ... so no rank is everyone's first target
//   pairwise  step i = 1 .. N-1 sends to r+i and receives from r-i, with at
//             most P sends and, separately, P receives incomplete (the
//             posting depth: coll/posting_depth.hpp, MODELS.md §6)
//   bruck     ceil(log2 N) steps; step k sends, packed, every block whose
//             index (relative to the rank) has bit k set to r + 2^k. Meant
//             for small blocks: it moves (N/2) log2 N blocks per rank
//
//   auto      choose_alltoall_auto
//
// In place: the output holds the blocks to send and is overwritten; the
// schedule first copies it to scratch.

#include <cstddef>
#include <cstdint>
#include <optional>

#include "coll/algorithm.hpp"
#include "sched/schedule.hpp"

namespace grove::coll {

struct AlltoallArgs {
  int rank = 0;
  int size = 1;
  size_t block_bytes = 0;
  bool in_place = false;
  AlgorithmSpec algorithm;  // "auto" is resolved
  // pairwise: the posting depth P; 0 reads the parameter alltoall_posts.
  uint32_t posts = 0;
};

// The parameter alltoall_posts ("auto" or a count >= 1), shared with
// alltoallv: nullopt for auto.
std::optional<uint32_t> alltoall_posts_setting();
// The depth pairwise runs with: the explicit setting (capped at N), or the
// rule of MODELS.md §6 for peer_bytes to each of N ranks and total_bytes in
// all. The depth only limits this rank's own messages: ranks may differ.
uint32_t alltoall_posting_depth(int size, uint64_t peer_bytes, uint64_t total_bytes);

// MPICH's rule (MODELS.md §2), on the per-destination block: bruck if at
// most 256 bytes and at least 8 ranks; linear (everything posted) below
// 32 KiB; else pairwise.
AlgorithmSpec choose_alltoall_auto(int size, size_t block_bytes);
AlgorithmSpec resolve_alltoall(const AlgorithmSpec& spec, int size, size_t block_bytes);

sched::Schedule build_alltoall(const AlltoallArgs& args);

}  // namespace grove::coll
