#pragma once
// Runs benchmark cells (collective x algorithm x size) on every rank of a
// communicator and summarises them on rank 0.
//
// Timing method: each iteration's time (the span) is the last rank's
// completion minus the first rank's start, both read from CLOCK_MONOTONIC,
// which all ranks on one host share. Each rank's own time of the call is kept
// too, for OSU's per-rank mean (suite/rank_mean.hpp); that metric hides the
// waiting of oversubscribed ranks, the span does not.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/stats.hpp"
#include "grove/comm.hpp"

namespace grove::bench {

enum class Cadence {
  isolated,       // a barrier before every call: the latency of one call
  barrier_after,  // a barrier after every call: OSU's loop
  streaming,      // calls back to back: throughput; a sample is a batch's mean
};

struct RunOptions {
  std::vector<std::string> collectives;  // empty: all
  std::string algorithm = "all";         // all | auto | a name
  std::vector<size_t> sizes;
  Cadence cadence = Cadence::isolated;
  double cell_seconds = 0.1;  // time budget per cell, warm-up excluded
  int warmup = 3;
  int min_iterations = 5;
  int max_iterations = 10000;
  // False: medians only, no bootstrap interval (stats::describe).
  bool median_ci = true;
  // Also report each rank's CPU time per call (getrusage of its process
  // around each call, user + system, every thread) as a row
  // "<algorithm>/cpu_per_call" whose samples are one mean per rank.
  bool cpu_time = false;
  // Non-empty: a ping-pong between ranks 0 and 1 just before and just after
  // every cell, appended to this file (suite/calibration.hpp).
  std::string calibration_path;
  // With calibration_path: a cell during which the machine changed state
  // (its large ping-pongs before and after differ by more than
  // kCalibrationChangedRatio) is run again, up to this many times; only the
  // last run's samples and calibration are kept (its rows replace the
  // earlier ones in the file, suite/calibration.hpp).
  int calibration_retries = 0;
};

struct CellResult {
  std::string collective;
  std::string algorithm;
  int ranks = 0;
  size_t bytes = 0;
  Cadence cadence = Cadence::isolated;
  std::vector<double> samples;                    // seconds: the span of each sample
  std::vector<std::vector<double>> rank_samples;  // [sample][rank]: each rank's own time
  stats::Summary summary;
};

std::string_view cadence_name(Cadence cadence);
// "isolated", "barrier-after", "streaming"; throws grove::Error(usage).
Cadence parse_cadence(std::string_view text);

// ", a barrier before each call" and the like, for settings lines.
std::string_view cadence_loop(Cadence cadence);

// How every cell is measured, for the settings lines of every output.
inline constexpr std::string_view kMetricsLine =
    "two metrics per cell: the span (last rank's completion - first rank's start of a call, "
    "shared CLOCK_MONOTONIC), median with 95% bootstrap CI; and OSU's per-rank mean (each "
    "rank's mean time of one call, then the mean over ranks; min and max over ranks), with 95% "
    "bootstrap CI; 2000 resamples";

// Throws grove::Error(usage) naming the first unknown collective, or an
// --algo that is not "all" and not an algorithm of a chosen collective;
// run_cells calls it first, `grove bench` before it prints anything.
void check_options(const RunOptions& options);

// Collective over `comm`; returns the results on rank 0 (empty elsewhere).
// `on_cell` (rank 0 only) reports progress after each cell.
std::vector<CellResult> run_cells(
    Comm& comm, const RunOptions& options,
    const std::function<void(size_t done, size_t total)>& on_cell = {});

// Parses "1:4MiB" (powers of two), "1:1MiB:4" (factor 4), "0,1,7,4096", or
// mixtures separated by commas. Throws grove::Error(usage) naming the part.
std::vector<size_t> parse_sizes(std::string_view spec);

}  // namespace grove::bench
