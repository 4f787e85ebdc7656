#pragma once
// The timed loop of one benchmark cell, written once for grove's runner and
// the peer drivers (bench/peers/), so every library is timed by the same
// code: same cadence, same batch sizes, same stopping rule, same reduction of
// per-rank stamps to per-iteration times. Header-only and free of grove's
// library so the MPI and Gloo peers can include it.
//
// `Ops` supplies three collective steps over the job's ranks:
//   void barrier();              // the library's own barrier
//   void call();                 // one call of the collective, to completion
//   bool agree(bool rank0_says); // every rank returns rank 0's value

#include <time.h>

#include <algorithm>
#include <vector>

namespace grove::bench {

// Isolated cadence checks the stopping rule every 8 calls; streaming times
// batches of 16 back-to-back calls and reports a batch's mean.
inline constexpr int kIsolatedBatch = 8;
inline constexpr int kStreamingBatch = 16;

struct LoopLimits {
  bool streaming = false;
  // Isolated cadence only: the barrier follows each call (OSU's loop, where
  // a call may start while others still leave the previous barrier) instead
  // of preceding it (every rank starts the call together).
  bool barrier_after = false;
  double cell_seconds = 0.1;  // time budget per cell, warm-up excluded
  int min_iterations = 5;
  int max_iterations = 10000;
};

struct Stamps {
  std::vector<double> start, end;  // this rank's, one per sample
};

// CLOCK_MONOTONIC is one clock for every process on a host, so stamps taken
// on different ranks can be compared directly.
inline double monotonic_seconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

template <class Ops>
void time_isolated(Ops& ops, const LoopLimits& limits, Stamps& stamps) {
  const double budget_end = monotonic_seconds() + limits.cell_seconds;
  for (;;) {
    for (int i = 0; i < kIsolatedBatch; ++i) {
      if (!limits.barrier_after) ops.barrier();
      const double t0 = monotonic_seconds();
      ops.call();
      const double t1 = monotonic_seconds();
      if (limits.barrier_after) ops.barrier();
      stamps.start.push_back(t0);
      stamps.end.push_back(t1);
    }
    const auto n = static_cast<int>(stamps.start.size());
    // Rank 0 decides for everyone: every rank must run the same number of calls.
    const bool more = n < limits.min_iterations ||
                      (n < limits.max_iterations && monotonic_seconds() < budget_end);
    if (!ops.agree(more)) break;
  }
}

template <class Ops>
void time_streaming(Ops& ops, const LoopLimits& limits, Stamps& stamps) {
  const double budget_end = monotonic_seconds() + limits.cell_seconds;
  int calls = 0;
  for (;;) {
    ops.barrier();
    const double t0 = monotonic_seconds();
    for (int i = 0; i < kStreamingBatch; ++i)
      ops.call();
    const double t1 = monotonic_seconds();
    calls += kStreamingBatch;
    stamps.start.push_back(t0);
    stamps.end.push_back(t1);
    const bool more = calls < limits.min_iterations ||
                      (calls < limits.max_iterations && monotonic_seconds() < budget_end);
    if (!ops.agree(more)) break;
  }
}

template <class Ops>
void time_cell(Ops& ops, const LoopLimits& limits, Stamps& stamps) {
  if (limits.streaming)
    time_streaming(ops, limits, stamps);
  else
    time_isolated(ops, limits, stamps);
}

// Per-sample times from every rank's stamps (`starts[r][i]`, `ends[r][i]`):
// the last rank's end minus the first rank's start, divided by the calls in
// a sample (kStreamingBatch when streaming). All ranks have the same count.
inline std::vector<double> iteration_times(const std::vector<std::vector<double>>& starts,
                                           const std::vector<std::vector<double>>& ends,
                                           bool streaming) {
  const double per_sample = streaming ? static_cast<double>(kStreamingBatch) : 1.0;
  std::vector<double> times;
  if (starts.empty()) return times;
  for (size_t i = 0; i < starts[0].size(); ++i) {
    double first_start = starts[0][i], last_end = ends[0][i];
    for (size_t r = 1; r < starts.size(); ++r) {
      first_start = std::min(first_start, starts[r][i]);
      last_end = std::max(last_end, ends[r][i]);
    }
    times.push_back((last_end - first_start) / per_sample);
  }
  return times;
}

// Per-sample, per-rank times (`[i][r]`): rank r's own end minus its own
// start of sample i, divided by the calls in a sample. OSU's latency of a
// rank is the mean of its column (suite/rank_mean.hpp).
inline std::vector<std::vector<double>> rank_times(const std::vector<std::vector<double>>& starts,
                                                   const std::vector<std::vector<double>>& ends,
                                                   bool streaming) {
  const double per_sample = streaming ? static_cast<double>(kStreamingBatch) : 1.0;
  std::vector<std::vector<double>> times;
  if (starts.empty()) return times;
  for (size_t i = 0; i < starts[0].size(); ++i) {
    std::vector<double> row;
    for (size_t r = 0; r < starts.size(); ++r)
      row.push_back((ends[r][i] - starts[r][i]) / per_sample);
    times.push_back(std::move(row));
  }
  return times;
}

// The cadence column's text of a loop.
inline const char* cadence_text(const LoopLimits& limits) {
  if (limits.streaming) return "streaming";
  return limits.barrier_after ? "barrier-after" : "isolated";
}

}  // namespace grove::bench
