#pragma once
// Runs benchmark cells (collective x algorithm x size) on every rank of a
// communicator and summarises them on rank 0.
//
// Timing method: each iteration's time is the last rank's completion minus
// the first rank's start, both read from CLOCK_MONOTONIC, which all ranks on
// one host share. Per-rank averages (OSU's method) hide the waiting of
// oversubscribed ranks; this does not.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/stats.hpp"
#include "grove/comm.hpp"

namespace grove::bench {

enum class Cadence {
  isolated,   // a barrier before every call: the latency of one call
  streaming,  // calls back to back: throughput; a sample is a batch's mean
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
};

struct CellResult {
  std::string collective;
  std::string algorithm;
  int ranks = 0;
  size_t bytes = 0;
  Cadence cadence = Cadence::isolated;
  std::vector<double> samples;  // seconds
  stats::Summary summary;
};

std::string_view cadence_name(Cadence cadence);

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
