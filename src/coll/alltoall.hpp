#pragma once
// Alltoall: block j of rank i's input goes to rank j, landing at block i of
// its output; every block is block_bytes. Algorithms (MODELS.md §2, §3):
//
//   linear    every receive and send posted at once, peers in the order
//             r+1, r+2, ... so no rank is everyone's first target
//   pairwise  step i = 1 .. N-1 sends to r+i and receives from r-i, with at
//             most P sends and, separately, P receives incomplete (the
//             posting depth: model/posting_depth.hpp, MODELS.md §6)
//   bruck     ceil(log2 N) steps; step k sends, packed, every block whose
//             index (relative to the rank) has bit k set to r + 2^k. Meant
//             for small blocks: it moves (N/2) log2 N blocks per rank
//
// In place: the output holds the blocks to send and is overwritten; the
// schedule first copies it to scratch.

#include <cstddef>
#include <cstdint>
#include <optional>

#include "sched/schedule.hpp"

namespace grove::coll {

struct AlltoallArgs {
  int rank = 0;
  int size = 1;
  size_t block_bytes = 0;
  bool in_place = false;
};

sched::Schedule alltoall_linear(const AlltoallArgs& args);
// `posts`: an explicit posting depth (authoritative, capped at N), or
// nullopt for the automatic rule.
sched::Schedule alltoall_pairwise(const AlltoallArgs& args, std::optional<uint32_t> posts);
sched::Schedule alltoall_bruck(const AlltoallArgs& args);

}  // namespace grove::coll
