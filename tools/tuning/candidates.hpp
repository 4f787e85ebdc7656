#pragma once
// The candidates of one cell (collective, ranks, bytes) and their predicted
// times under a port model: every modelled algorithm that can run on that
// many ranks, at every radix it takes (2 .. ranks), and at the segment size
// its closed form makes fastest (model/segment.hpp). `grove tune`, `grove
// explain` and the tuning report rank cells with this one function.

#include <cstdint>
#include <string>
#include <vector>

#include "coll/algorithm.hpp"
#include "coll/cost_terms.hpp"

namespace grove::tuning {

struct Candidate {
  coll::AlgorithmSpec spec;  // complete: radix and segment filled in
  double predicted_us = 0;
  int order = 0;  // declaration order of the algorithm (ties)
};

// The most segments a segment size may make (the pipeline's own bound,
// coll/bcast.cpp).
inline constexpr uint64_t kMaxSegments = uint64_t{1} << 20;
// Radices tried at most (beyond it a tree is flat for any job run here).
inline constexpr int kMaxRadix = 1024;

// Fastest first; ties (the same predicted time) in declaration
// order, then the smaller radix, then the larger segment. Algorithms
// without a closed form (shm) are not candidates. Throws grove::Error for
// an unknown collective.
std::vector<Candidate> rank_candidates(const std::string& collective, int ranks, uint64_t bytes,
                                       const coll::PortModel& model);

// The predicted time of one complete spec (radix and segment given), us.
double predict(const coll::AlgorithmSpec& spec, int ranks, uint64_t bytes,
               const coll::PortModel& model);

// The modelled collectives that have more than one algorithm to choose
// from (alltoallv has one: nothing to tune), in declaration order.
std::vector<std::string> tunable_collectives();

}  // namespace grove::tuning
