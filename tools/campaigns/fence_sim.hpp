#pragma once
// The fence on the deterministic simulator (src/transport/sim/): one run of
// a few fences on N simulated ranks with failures at chosen virtual times,
// the checks a fault campaign needs, and the campaign itself (docs/fence.md):
//
// - every single relay killed at every message step of a fence: a
//   failure-free run records the virtual time of every fence message; each
//   distinct time is one step; every rank with children in the routing or
//   the release tree (the root included) is killed at each step in turn;
// - seeded random double and triple failures at random times.
//
// A run passes when every survivor holds every fence's result exactly once,
// all survivors' results are identical byte for byte, every entry is the
// right rank's blob (departed ranks empty and truly departed), and nothing
// hangs (a stall, or the virtual-time limit, is a failure).
//
// The harness plays the launcher: each departure becomes a FailureNotice
// (monotone version) delivered after a seeded random delay, to every
// survivor, or only to the root (the first living rank, which must relay
// it), or to the root and a random half of the others.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/fence_engine.hpp"
#include "transport/sim/sim_config.hpp"
#include "transport/sim/sim_time.hpp"

namespace grove::runtime {

enum class SimNotices : uint8_t { all, root_only, mixed };
std::string_view sim_notices_name(SimNotices notices);

struct FenceSimCase {
  int size = 8;
  FenceConfig config;
  int generations = 2;                              // fences started back to back by every rank
  std::vector<std::pair<int, sim::Time>> failures;  // (rank, virtual time)
  SimNotices notices = SimNotices::all;
  sim::Time notice_delay = sim::from_micros(300);  // each notice: uniform in [0, this]
  uint64_t seed = 1;                               // notice delays
  size_t max_blob = 48;                            // blob sizes: 0 .. max_blob bytes
  std::optional<size_t> blob_bytes;                // or every blob exactly this long
  sim::Time limit = sim::from_seconds(60);         // virtual time: past it, a hang
  bool record_steps = false;
};

struct FenceSimResult {
  bool ok = false;
  std::string failure;  // why not ok
  int survivors = 0;
  sim::Time completion = 0;  // the last survivor's hold of the last fence
  // Generation 0: the root's release coverage (latest hold minus the root's
  // start; 0 if the root departed before every rank acked).
  sim::Time coverage = 0;
  size_t payload_bytes = 0;  // generation 0's release on the wire
  uint64_t messages = 0;     // active messages sent
  uint64_t replays = 0, parked = 0, adopted_up = 0;
  uint64_t superseded = 0;       // partial payloads replaced by a newer result's segments
  std::vector<sim::Time> steps;  // record_steps: distinct send times, ascending
  std::string describe() const;  // one line
};

FenceSimResult run_fence_sim(const FenceSimCase& c, const sim::SimConfig& sim_config);

// Every rank that relays in the routing or the release tree of `size`
// living ranks under `config` (the root included).
std::vector<int> fence_relays(int size, const FenceConfig& config);

struct FenceCampaign {
  std::vector<int> sizes = {8, 16, 64, 256};
  std::vector<int> release_radices = {2, 3, 4};
  std::vector<int> routing_radices = {4, 8, 16, 32, 64};
  // Single kills: at most this many steps per relay (evenly spread over
  // them; 0 = every step).
  size_t max_steps = 0;
  size_t random_trials = 10000;   // double and triple failures
  size_t random_max_size = 256;   // random trials use sizes up to this
  bool random_kill_root = false;  // every random trial kills the root among its victims
  // fence_release_segment of every run, and the largest blob: a segment
  // well below max_blob x size makes every release several segments, so
  // relays die between segments (a release of N x ~max_blob/2 bytes).
  uint64_t release_segment = 64 * 1024;
  size_t max_blob = 48;
  uint64_t seed = 1;
  int generations = 2;
};

struct FenceCampaignCounts {
  uint64_t shapes = 0;       // (size, routing radix, release radix) combinations
  uint64_t single_runs = 0;  // one relay killed at one step
  uint64_t random_runs = 0;  // double and triple failures
  uint64_t failures = 0;     // ranks killed, over all runs
  uint64_t fences = 0;       // fences completed by survivors, over all runs
  uint64_t bad = 0;          // runs that did not pass
  uint64_t replays = 0, parked = 0, adopted_up = 0, superseded = 0;
  std::vector<std::string> first_bad;  // up to 10 descriptions
  double wall_seconds = 0;
};

// `progress` (may be empty) gets a line per shape.
FenceCampaignCounts run_fence_campaign(const FenceCampaign& campaign,
                                       const sim::SimConfig& sim_config,
                                       const std::function<void(const std::string&)>& progress);

}  // namespace grove::runtime
