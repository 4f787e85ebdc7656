#pragma once
// The reliable two-tree fence of one communicator on one rank (docs/fence.md). A fence is an
// allgather of variable-size blobs:
//
// Rollup (routing tree, k-ary at rollup_radix over the living ranks): a rank
// sends its parent every contribution of its subtree once it holds them
// all, aggregated. Restart is by view: a rank re-sends whenever its failure
// view changes, and a parent counts a child only once that child has
// reported under a view at least as new as the parent's own, so a subtree
// that grew in a repair is never taken as complete from older news. The
// root (the first living rank from `root`) builds the result: every living
// rank's blob, departed ranks' entries empty and listed.
//
// Release (ReliableBcast on the release tree, k-ary at release_radix, or on
// the routing tree when low_radix_release is off): the root's result, held
// and replayed until every subtree acknowledges. It reaches every rank. It
// travels in segments of release_segment bytes that relays pass on as they
// arrive (pipelined); a rank delivers only the whole result.
//
// Failure view: departed set + monotone version (a count of departures
// learned), from launcher notices and from the root's relay: a rank whose
// view grows sends its view to its routing children, so the view spreads
// from the root down the routing tree; every rank adopts any newer view.
// Every message carries the sender's version (docs/fence.md, lesson 5).
//
// A root that departs mid-release: a rank holding a result whose origin
// departed carries it up the routing tree (release_up); the new root adopts
// it and replays it rather than building another, so survivors never hold
// two different results for one generation.
//
// Generations: each rank's k-th fence on a communicator is generation k. A
// rank contributes to g+1 only after it holds g, so holding g+1 proves every
// living rank held g and g-1 can be retired.
//
// Not thread-safe: one thread drives the transport and the engine.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>

#include "bootstrap/bootstrap.hpp"
#include "grove/error.hpp"
#include "runtime/fence_wire.hpp"
#include "runtime/reliable_bcast.hpp"
#include "topo/live_tree.hpp"
#include "transport/transport.hpp"

namespace grove::runtime {

struct FenceConfig {
  int routing_radix = 64;         // rollup_radix
  int release_radix = 4;          // release_radix
  bool low_radix_release = true;  // false: the release travels the routing tree
  double release_delay = 0;       // seconds a non-root relay holds its first forward
  // fence_release_segment: bytes per release segment (0: the whole payload
  // in one message, store-and-forward). Each holder cuts its own sends;
  // receivers reassemble any cut, so ranks need not agree on it.
  uint64_t release_segment = 64 * 1024;
  bool timing = false;  // fence_timing: keep per-generation stamps
  int root = 0;         // the preferred root; the first living rank from it rules

  // From the parameters rollup_radix, release_radix, low_radix_release,
  // fence_release_delay_ms, fence_release_segment, fence_timing (and
  // fence_algorithm if forced).
  static FenceConfig from_params();
  tag::Topology release_topology() const {
    return low_radix_release ? tag::Topology::release : tag::Topology::routing;
  }
  // "rollup_radix=64 release_radix=4 low_radix_release=on"
  std::string describe() const;
  bool operator==(const FenceConfig&) const = default;
};

// A rollup for a fence this rank has not started yet: judged once it starts
// it (under the engine and parameters of that fence).
struct FutureMessage {
  tag::Topology path = tag::Topology::routing;
  int source = -1;
  Blob bytes;
  uint64_t generation = 0;
};

// What one engine passes to the next when a communicator's fence
// parameters change between fences: the failure view and the numbering
// carry over; the new engine ignores the old configuration's late messages.
struct FenceHandover {
  FailureView view;
  std::vector<FailureNotice> early_notices;
  uint64_t next_generation = 0;
  std::vector<FutureMessage> future;
};

// Prints a one-time warning (on `rank` == config.root) when the release tree
// is configured to be the routing tree (equal radices); the run continues.
void warn_if_release_is_routing(const FenceConfig& config, int rank);

// fence_timing stamps of one generation on this rank, on the transport clock.
struct FenceTiming {
  double started = 0;        // the root's stamp when it started the release
  double held = 0;           // when this rank held the result
  double covered = 0;        // root only: the latest "held" of any rank, once all acked
  size_t payload_bytes = 0;  // the release's size on the wire (encoded result)
};

struct FenceStats {
  uint64_t sent[6] = {};  // by FenceKind
  uint64_t bytes_sent = 0;
  uint64_t view_changes = 0;
  uint64_t rollup_resends = 0;  // rollups sent again after a view change
  uint64_t released = 0;        // results built here as root
  uint64_t results_held = 0;    // generations held here (each must be exactly once)
  uint64_t adopted_up = 0;      // results adopted from release_up
  uint64_t from_departed = 0;   // messages dropped: their sender had departed
  uint64_t stale = 0;           // messages of a previous configuration, dropped
};

class FenceEngine final : public ReliableHost {
 public:
  // Registers the AM handlers of `context` on `transport`; `handover`
  // continues a previous engine of the same communicator.
  FenceEngine(Transport& transport, uint32_t context, FenceConfig config,
              FenceHandover handover = {});
  ~FenceEngine() override;
  FenceEngine(const FenceEngine&) = delete;
  FenceEngine& operator=(const FenceEngine&) = delete;

  // Failure view input. Ignored unless newer than the current view. Returns
  // true if the view changed (and the protocol reacted).
  bool adopt_view(const std::set<int>& departed, uint64_t version);
  bool on_notice(const FailureNotice& notice);
  const FailureView& view() const { return view_; }

  // Starts this rank's next fence; returns its generation. Contributes at
  // once if the previous generation is held here, else when it is.
  uint64_t start(std::span<const std::byte> mine);
  bool delivered(uint64_t generation) const { return results_.count(generation) != 0; }
  // The result of a delivered generation, moved out (once).
  FenceResult take_result(uint64_t generation);
  // Nobody will take the result of `generation` (its request was dropped):
  // it is not kept once delivered.
  void forget(uint64_t generation);

  // Fences started here so far (the next start's generation).
  uint64_t generations_started() const { return next_generation_; }
  // A fence started here is not held yet.
  bool in_flight() const;
  // Unregisters this engine and returns what its successor needs; the
  // engine is inert afterwards.
  FenceHandover hand_over();

  // Timed work (held forwards). Call after transport progress.
  void poll();
  double next_timer() const { return bcast_.next_timer(); }
  // Throws the first error seen (a peer configured differently, a malformed
  // message), naming it.
  void check_error() const;
  // Nothing this rank still owes another (every held release acknowledged).
  bool quiescent() const { return bcast_.quiescent(); }

  std::optional<FenceTiming> timing(uint64_t generation) const;
  const FenceStats& stats() const { return stats_; }
  const ReliableStats& release_stats() const { return bcast_.stats(); }
  const FenceConfig& config() const { return config_; }
  uint32_t context() const { return context_; }
  // What this rank still waits for, for timeout messages.
  std::string describe_pending() const;

  // ReliableHost
  int self() const override { return self_; }
  uint64_t tree_version() const override { return view_.version; }
  const topo::LiveTree& tree(tag::Topology topology) override;
  void send(const std::vector<int>& peers, FenceMessage message) override;
  void delivered(const OpId& id, const std::shared_ptr<const Blob>& payload, double started,
                 double held) override;
  void completed(const OpId& id, double held_latest) override;
  double now() const override { return transport_.now(); }

 private:
  struct Round {
    bool started = false;  // this rank has contributed
    std::map<int, Blob> contributions;
    std::map<int, uint64_t> reports;     // sender -> newest tree version it reported under
    uint64_t sent_version = UINT64_MAX;  // view version of the last rollup sent up
    int sent_to = -1;
    std::shared_ptr<const Blob> release;  // the result, once held
    int origin = -1;                      // the root that built it
    uint64_t origin_version = 0;          // and its view version then (the PayloadKey)
    uint64_t up_version = UINT64_MAX;     // last release_up: view version and target
    int up_to = -1;
  };

  void on_message(tag::Topology path, int source, std::span<const std::byte> bytes);
  bool config_matches(const FenceHeader& header) const;
  Error mismatch_error(const FenceHeader& header, int source) const;
  void check_topology(const FenceHeader& header, tag::Topology path, int source) const;
  void record_error(const Error& error);
  void on_rollup(int source, const FenceMessage& message);
  void on_release_up(const FenceMessage& message);
  void view_changed();
  bool apply_early_notices();
  void begin(uint64_t generation, Blob mine);
  void try_rollup(uint64_t generation);
  void release_as_root(uint64_t generation, Round& round);
  void maybe_release_up(uint64_t generation);
  OpId op_id(uint64_t generation) const {
    return {config_.release_topology(), context_, generation};
  }

  Transport& transport_;
  const uint32_t context_;
  const FenceConfig config_;
  const int self_;
  const int size_;
  FailureView view_;
  std::map<uint64_t, FailureNotice> early_notices_;  // notices past a gap in versions
  std::optional<topo::LiveTree> routing_tree_;       // under view_, built on demand
  std::optional<topo::LiveTree> release_tree_;
  ReliableBcast bcast_;
  std::map<uint64_t, Round> rounds_;
  // Generations below: every living rank held them (or a predecessor engine ran them).
  uint64_t retired_below_;
  const uint64_t first_generation_;  // this engine's first (earlier ones: a predecessor's)
  uint64_t next_generation_;
  std::vector<FutureMessage> future_;
  bool handed_over_ = false;
  std::map<uint64_t, Blob> deferred_;  // contributions waiting for the previous generation
  std::map<uint64_t, FenceResult> results_;
  std::set<uint64_t> unwanted_;              // generations whose result nobody will take
  std::map<uint64_t, FenceTiming> timings_;  // fence_timing; the most recent few
  std::optional<Error> error_;
  FenceStats stats_;
};

}  // namespace grove::runtime
