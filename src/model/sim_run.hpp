#pragma once
// Runs one collective on the simulator: every rank's schedule, unchanged,
// through the real executor on a SimTransport. Used by `grove sim`,
// `grove model radix`, the model-vs-simulation tests and the correctness
// tests at scale.
//
// Memory: a schedule its builder declares symmetric is built once and
// shared by every rank it covers (sim_schedules.hpp); other ranks' schedules
// are built when the run starts and dropped as soon as the rank completes.
// In sizes-only mode no rank has buffers at all (the executor moves no bytes
// on a transport without payload). Before anything runs, the cost is
// estimated (sim_estimate.hpp) and a run over the memory limit is refused.

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "model/sim_estimate.hpp"
#include "sched/schedule.hpp"
#include "transport/sim/sim_world.hpp"

namespace grove::model {

// A rank's block layouts as its builder sees them (alltoallv's counts).
struct RankLayouts {
  std::vector<size_t> input_offsets, input_lengths;
  std::vector<size_t> output_offsets, output_lengths;
  bool operator==(const RankLayouts&) const = default;
};

struct SimJob {
  std::string what;  // for errors: "bcast knomial:4, 4096 B, 10000 ranks"
  int size = 1;
  // The schedule of `rank`. Called once per rank, at the start of the run.
  std::function<sched::Schedule(int rank)> build;
  // Buffer lengths of `rank` (input may be 0 for in-place collectives).
  std::function<size_t(int rank)> input_bytes;
  std::function<size_t(int rank)> output_bytes;
  // For builders whose shared schedules follow each rank's own layouts
  // (sched::Symmetry::rank_layouts): `rank`'s layouts, as its builder sees
  // them. Absent: such schedules are not shared, every rank builds its own.
  std::function<RankLayouts(int rank)> layouts;
  // For builders whose schedules declare a shape (sched::Symmetry::shape):
  // `rank`'s, as its builder computes it, without building the schedule.
  // Absent: such schedules are not shared.
  std::function<uint64_t(int rank)> shape;
  // Real-bytes mode only: fill a rank's input and output before the run
  // (output matters for in-place collectives), and check its output after.
  // check returns an empty string when the output is right, else the cause.
  std::function<void(int rank, std::span<std::byte> input, std::span<std::byte> output)> fill;
  std::function<std::string(int rank, std::span<const std::byte> output)> check;
};

// Where a run is, for a progress line.
struct SimProgress {
  sim::Time now = 0;  // virtual
  uint64_t events = 0;
  double events_expected = 0;  // the estimate's
  int ranks_done = 0;
  int ranks = 0;
  double wall_seconds = 0;  // since the simulation (not the set-up) started
};

struct SimOptions {
  bool per_rank = false;            // keep every rank's completion time
  sim::TraceSink* trace = nullptr;  // not owned
  // Abort (grove::Error timeout) if the virtual clock passes this.
  sim::Time virtual_limit = sim::kNever;
  // Refuse a run whose estimated peak memory is larger, bytes; 0: no limit;
  // unset: the sim_max_memory parameter.
  std::optional<uint64_t> max_memory;
  // Called about every progress_seconds of real time while the run goes.
  std::function<void(const SimProgress&)> progress;
  double progress_seconds = 1.0;
};

struct SimResult {
  sim::Time completion = 0;  // the last rank's completion
  int last_rank = 0;
  std::vector<sim::Time> per_rank;  // when asked
  sim::SimWorld::Stats stats;
  SimEstimate estimate;         // made before the run
  size_t schedules_built = 0;   // builder calls (shared schedules and their checks included)
  size_t schedules_shared = 0;  // schedules that stood for several ranks
  double wall_seconds = 0;      // real time the run took (estimate, build and simulate)
  double build_seconds = 0;     // of which estimating, schedule building and executor setup
};

// Throws grove::Error: invalid_argument when the estimate exceeds the
// memory limit (the message gives the estimate), the first rank's execution
// error, a stall (ranks not done with nothing in flight: the pending steps
// of the first such rank are named), or a wrong output in real-bytes mode
// (the first bad rank named).
SimResult run_on_sim(const SimJob& job, const sim::SimConfig& config,
                     const SimOptions& options = {});

}  // namespace grove::model
