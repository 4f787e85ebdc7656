#pragma once
// `grove tune --verify K`: model-guided search. At the job's own rank count
// every cell's K fastest predicted candidates are measured (measure.hpp)
// and the measured best is kept; cells at other rank counts keep the
// model's choice. With `exhaustive`, `grove bench --algo all` then runs over
// the same collectives and sizes in the same job, and the two run times and
// the choices are compared.

#include <string>
#include <vector>

#include "grove/comm.hpp"
#include "tuning/measure.hpp"
#include "tuning/tune.hpp"

namespace grove::tuning {

struct VerifyReport {
  int ranks = 0;
  int cells = 0;
  int measurements = 0;
  double seconds = 0;  // the verification's own wall time
  bool exhaustive = false;
  int exhaustive_measurements = 0;
  double exhaustive_seconds = 0;
  // Per verified cell: tune's kept choice against the exhaustive run's
  // fastest (its measured median over theirs; 1 = the same time).
  struct CellComparison {
    std::string collective;
    uint64_t bytes = 0;
    std::string kept;
    double kept_us = 0;
    std::string best;  // fastest of --algo all (auto excluded)
    double best_us = 0;
  };
  std::vector<CellComparison> comparisons;

  std::string text() const;  // the summary `grove tune` prints
};

// Collective over `comm`: every rank calls it with the same tuning, model,
// and options. Results (the cells' choices, the report) on rank 0.
VerifyReport verify(Comm& comm, Tuning& tuning, const coll::PortModel& model, int top_k,
                    const MeasureOptions& options, bool exhaustive);

}  // namespace grove::tuning
