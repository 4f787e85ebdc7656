#pragma once
// Scatter: the root's input holds N blocks of block_bytes in rank order;
// rank i receives block i. Algorithms (pLogP costs in MODELS.md §1, Table 2):
//
//   flat      the root sends every block directly
//   binomial  the "combined message" binomial tree of seed 001
//             (Barchet-Estefanel & Mounié): each rank receives its whole
//             subtree's blocks in one message, keeps its own and forwards
//             the rest, largest subtree first
//   chain     rank root+1 receives the N-1 other blocks, keeps its own and
//             forwards N-2 to root+2, and so on (sum_j g(j m) + (P-1)L)

#include <cstddef>

#include "sched/schedule.hpp"

namespace grove::coll {

struct ScatterArgs {
  int rank = 0;
  int size = 1;
  int root = 0;
  size_t block_bytes = 0;
};

sched::Schedule scatter_flat(const ScatterArgs& args);
sched::Schedule scatter_binomial(const ScatterArgs& args);
sched::Schedule scatter_chain(const ScatterArgs& args);

}  // namespace grove::coll
