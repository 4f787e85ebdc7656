#pragma once
// Runs one collective on the simulator: every rank's schedule, unchanged,
// through the real executor on a SimTransport. Used by `grove sim`,
// `grove model radix`, the model-vs-simulation tests and the correctness
// tests at scale.
//
// Memory: a rank's schedule is built when the run starts and dropped as soon
// as that rank completes; in sizes-only mode no rank has buffers at all
// (the executor moves no bytes on a transport without payload).

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sched/schedule.hpp"
#include "transport/sim/sim_world.hpp"

namespace grove::model {

struct SimJob {
  std::string what;  // for errors: "bcast knomial:4, 4096 B, 10000 ranks"
  int size = 1;
  // The schedule of `rank`. Called once per rank, at the start of the run.
  std::function<sched::Schedule(int rank)> build;
  // Buffer lengths of `rank` (input may be 0 for in-place collectives).
  std::function<size_t(int rank)> input_bytes;
  std::function<size_t(int rank)> output_bytes;
  // Real-bytes mode only: fill a rank's input and output before the run
  // (output matters for in-place collectives), and check its output after.
  // check returns an empty string when the output is right, else the cause.
  std::function<void(int rank, std::span<std::byte> input, std::span<std::byte> output)> fill;
  std::function<std::string(int rank, std::span<const std::byte> output)> check;
};

struct SimOptions {
  bool per_rank = false;            // keep every rank's completion time
  sim::TraceSink* trace = nullptr;  // not owned
  // Abort (grove::Error timeout) if the virtual clock passes this.
  sim::Time virtual_limit = sim::kNever;
};

struct SimResult {
  sim::Time completion = 0;  // the last rank's completion
  int last_rank = 0;
  std::vector<sim::Time> per_rank;  // when asked
  sim::SimWorld::Stats stats;
  double wall_seconds = 0;   // real time the run took (build + simulate)
  double build_seconds = 0;  // of which schedule building and executor setup
};

// Throws grove::Error: the first rank's execution error, a stall (ranks not
// done with nothing in flight: the pending steps of the first such rank are
// named), or a wrong output in real-bytes mode (the first bad rank named).
SimResult run_on_sim(const SimJob& job, const sim::SimConfig& config,
                     const SimOptions& options = {});

}  // namespace grove::model
