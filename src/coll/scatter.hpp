#pragma once
// Scatter: the root's input holds N blocks of block_bytes in rank order;
// rank i receives block i. Algorithms (names as in `scatter_algorithm`;
// pLogP costs in docs/models.md):
//
//   flat      the root sends every block directly
//   binomial  the "combined message" binomial tree (Barchet-Estefanel &
//             Mounié 2004): each rank receives its whole
//             subtree's blocks in one message, keeps its own and forwards
//             the rest, largest subtree first
//   chain     rank root+1 receives the N-1 other blocks, keeps its own and
//             forwards N-2 to root+2, and so on (sum_j g(j m) + (P-1)L)
//   shm       the shared-memory engine (blocking calls only)
//   auto      selection (coll/select.hpp)
// Every algorithm handles any size and root and 0 bytes (an empty schedule).

#include <cstddef>

#include "coll/algorithm.hpp"
#include "coll/select.hpp"
#include "sched/schedule.hpp"

namespace grove::coll {

struct ScatterArgs {
  int rank = 0;
  int size = 1;
  int root = 0;
  size_t block_bytes = 0;
  AlgorithmSpec algorithm;  // "auto" is resolved
};

// Selection's view: bytes = the block to each rank, total = all N blocks.
CallFacts facts(const ScatterArgs& args);

sched::Schedule build_scatter(const ScatterArgs& args);

}  // namespace grove::coll
