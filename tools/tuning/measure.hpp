#pragma once
// Measuring algorithms on the current job for `grove tune --verify` and
// `grove explain --measure`: each spec forced in turn and timed by the
// benchmark suite's cell loop (bench/suite/runner.hpp: the same warm-up,
// cadence, stopping rule and per-call time as `grove bench`).

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "grove/comm.hpp"

namespace grove::tuning {

struct MeasureOptions {
  double cell_seconds = 0.1;
  int warmup = 3;
  int min_iterations = 5;
  int max_iterations = 10000;
  bool median_ci = true;  // false: medians only (no bootstrap; --verify)
};

inline constexpr double kNotMeasured = std::numeric_limits<double>::quiet_NaN();

// The median time (us) of one call of `collective` on `comm` with each spec
// ("auto" allowed) at `bytes` (the suite's cell: block bytes where per
// rank). Collective over `comm`: every rank calls it with the same
// arguments. The values are valid on rank 0 only; a spec the call refuses
// (a forced shm that does not fit) is kNotMeasured.
std::vector<double> measure_specs(Comm& comm, const std::string& collective, uint64_t bytes,
                                  const std::vector<std::string>& specs,
                                  const MeasureOptions& options);

// The bytes a suite cell of `bytes` moves for `collective` (a float32
// reduction rounds up to whole elements).
uint64_t measured_bytes(const std::string& collective, uint64_t bytes);

}  // namespace grove::tuning
