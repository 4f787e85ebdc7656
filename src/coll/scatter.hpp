#pragma once
// Scatter: the root's input holds N blocks of block_bytes in rank order;
// rank i receives block i. Algorithms (names as in `scatter_algorithm`;
// pLogP costs in MODELS.md §1, Table 2):
//
//   flat      the root sends every block directly
//   binomial  the "combined message" binomial tree of seed 001
//             (Barchet-Estefanel & Mounié): each rank receives its whole
//             subtree's blocks in one message, keeps its own and forwards
//             the rest, largest subtree first
//   chain     rank root+1 receives the N-1 other blocks, keeps its own and
//             forwards N-2 to root+2, and so on (sum_j g(j m) + (P-1)L)
//   auto      choose_scatter_auto
// Every algorithm handles any size and root and 0 bytes (an empty schedule).

#include <cstddef>

#include "coll/algorithm.hpp"
#include "sched/schedule.hpp"

namespace grove::coll {

struct ScatterArgs {
  int rank = 0;
  int size = 1;
  int root = 0;
  size_t block_bytes = 0;
  AlgorithmSpec algorithm;  // "auto" is resolved
};

// Binomial at every size: MPICH's only scatter, lgp α + n(p-1)/p β
// (MODELS.md §2); seed 001 measured it ahead of flat on its cluster.
AlgorithmSpec choose_scatter_auto(int size, size_t block_bytes);
AlgorithmSpec resolve_scatter(const AlgorithmSpec& spec, int size, size_t block_bytes);

sched::Schedule build_scatter(const ScatterArgs& args);

}  // namespace grove::coll
