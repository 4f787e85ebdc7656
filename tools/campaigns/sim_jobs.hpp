#pragma once
// SimJobs for the collectives: a collective's name, an algorithm name and
// the call's shape give every rank's schedule (from the collective's own
// builder), its buffer lengths, and in real-bytes mode the input pattern and
// the check of the result.

#include <cstddef>
#include <string>
#include <vector>

#include "model/sim_run.hpp"

namespace grove::model {

struct JobShape {
  std::string collective;  // "bcast", "barrier", ...
  std::string algorithm;   // "binomial", "knomial:4", "kary:8", ...
  int size = 1;
  size_t bytes = 0;  // the collective's message size (per rank where per-rank)
  int root = 0;
};

// Throws grove::Error(invalid_argument) naming an unknown collective or
// algorithm, or a bad shape.
SimJob make_sim_job(const JobShape& shape);

// The collectives make_sim_job knows.
std::vector<std::string> sim_collectives();

}  // namespace grove::model
