#pragma once
// What a simulated run will cost, known before it starts: messages, events
// and peak memory, from the schedules of a few ranks (every distinct one
// when the schedules are shared, see sim_schedules.hpp) and a dry run of
// each that posts everything it can before completing anything. The run
// refuses to start when the memory estimate exceeds sim_max_memory, so a
// question too big for the machine gets an answer instead of the kernel's
// out-of-memory killer.
//
// The memory model counts what grows with ranks and with what is in flight:
// schedules (shared or one per rank), executions (StepCells window, ready
// heaps), the world (per rank and per node), messages and posted receives
// in flight, and in real-bytes mode the buffers. It is an estimate: the dry
// run's posting peak is a bound of what a rank can have posted at once, and
// ranks are assumed to peak together.

#include <cstddef>
#include <cstdint>
#include <string>

#include "transport/sim/sim_config.hpp"

namespace grove::model {

struct SimJob;
class SimSchedules;

struct SimEstimate {
  int ranks = 0;
  bool sampled = false;  // from a sample of ranks' schedules (not shared by all)
  double steps = 0;      // schedule steps over all ranks
  double messages = 0;   // tagged messages
  double bytes = 0;      // their bytes
  double events = 0;     // simulator events (about 4 per message between nodes)
  // Peak memory, bytes, and its parts.
  double memory = 0;
  double schedule_memory = 0;   // schedules and their dependency graphs
  double execution_memory = 0;  // per-rank executor state
  double world_memory = 0;      // per-rank and per-node simulator state
  double flight_memory = 0;     // messages and posted receives in flight, at the peak
  double buffer_memory = 0;     // real-bytes mode: every rank's buffers and scratch

  // "2.0e8 messages, 8.0e8 events, 1.30 GB at the peak (schedules 0.01, ...)"
  std::string summary() const;
};

// Builds (through `schedules`, which keeps the shared ones for the run)
// the schedules of the ranks it samples and dry-runs each distinct one.
SimEstimate estimate_sim(const SimJob& job, const sim::SimConfig& config, SimSchedules& schedules);

// The sim_max_memory parameter in bytes: "auto" is half the machine's
// physical memory; 0 means no limit.
uint64_t sim_max_memory();

}  // namespace grove::model
