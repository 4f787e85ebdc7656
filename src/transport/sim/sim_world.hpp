#pragma once
// SimWorld: N ranks in one process on a virtual clock, each with a
// SimTransport implementing transport.hpp's contract exactly (matching by
// (source, tag), non-overtaking per pair, truncation, probe, active
// messages), and a discrete-event engine that times every message by the
// model in sim_config.hpp.
//
// Determinism: events are ordered by (virtual time, insertion number); the
// only randomness is the seeded jitter. The same program, configuration and
// seed give the same event order, times and trace, bit for bit.
//
// Single-threaded: callbacks and AM handlers run inside step()/run(), which
// a SimTransport's progress() and block() also call. Ranks' code must not
// wait in a loop on the real clock; block() advances the virtual clock when
// nothing is pending, so timeouts expressed in now() still fire.
//
// Per-rank state is a few words plus `threads` worker times; matching state
// is shared and proportional to messages in flight.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "transport/sim/sim_config.hpp"
#include "transport/sim/sim_time.hpp"
#include "transport/sim/trace.hpp"
#include "transport/transport.hpp"

namespace grove::sim {

class SimWorld;

// A rank's state in the simulator that every message reads (SimWorld's
// internals). It lives in the rank's SimTransport, whose first words the
// executor reads to post anyway, so the two share one cache line.
struct SimRankState {
  Time last_ready = 0;  // egress-ready time of this rank's previous send
  Time shm_last = 0;    // delivery time of its previous intra-node send
  Time rx_free = 0;     // its receive thread is busy until then
  Time worker0 = 0;     // when its first worker thread is next free (the others: Impl::workers)
  // The stream this rank received on last, kept in the table even while
  // empty, so a rank receiving from one sender in a row (a ring) finds it
  // here and makes or removes no stream per message. Invariant: a stream
  // is in the table while it holds something or is its receiver's cached
  // one.
  int32_t cached_src : 31 = -1;
  // Set only while the cached stream holds something (a receive or a
  // message): moving the cache off such a stream leaves it in the table
  // without reading it (a pairwise alltoall's receiver posts to a new
  // sender each time, while the last one's receive still waits). Clear:
  // it may be empty, and is read when the cache moves.
  bool cached_busy : 1 = false;
  uint32_t cached_stream = UINT32_MAX;
};

class alignas(64) SimTransport final : public Transport {
 public:
  SimTransport(SimWorld* world, int rank) : world_(world), rank_(rank) {}

  int rank() const override { return rank_; }
  int size() const override;
  std::string name() const override { return "sim"; }
  bool carries_payload() const override;

  void send(int peer, Tag tag, const void* data, size_t length, CompletionFn done,
            void* context) override;
  void recv(int peer, Tag tag, void* data, size_t capacity, CompletionFn done,
            void* context) override;
  // A receive no message matched yet completes with Errc::cancelled at the
  // current virtual time. A send's bytes were copied when it was posted:
  // it completes when its time comes, as does a matched receive.
  void cancel(int peer, Tag tag, void* context, CancelMode mode) override;
  std::optional<Probe> probe(int peer, Tag tag, Tag mask) override;
  void set_am_handler(uint16_t id, AmHandler handler) override;
  void am_send(int peer, uint16_t id, std::span<const std::byte> payload) override;
  // Processes one event of the whole world.
  bool progress() override;
  // Processes one event; with none pending, advances the clock by `max`.
  void block(int extra_fd, std::chrono::microseconds max) override;
  double now() const override;

  SimRankState& state() { return state_; }
  const SimRankState& state() const { return state_; }

 private:
  SimWorld* world_;
  int rank_;
  SimRankState state_;
};
static_assert(sizeof(SimTransport) == 64, "a rank's transport and state share one cache line");

class SimWorld {
 public:
  struct Stats {
    uint64_t messages_sent = 0;  // tagged sends posted
    uint64_t bytes_sent = 0;
    uint64_t messages_received = 0;  // tagged messages matched to a receive
    uint64_t bytes_received = 0;     // bytes of those messages
    uint64_t ams_sent = 0;
    uint64_t ams_delivered = 0;
    uint64_t dropped = 0;  // messages lost to a failed sender or receiver
    uint64_t events = 0;
  };

  // Throws grove::Error(invalid_argument / invalid_parameter) on a bad size
  // or configuration. Sizes up to 2^20 ranks (the wire tag's source bits).
  SimWorld(int size, SimConfig config);
  ~SimWorld();
  SimWorld(const SimWorld&) = delete;
  SimWorld& operator=(const SimWorld&) = delete;

  int size() const;
  const SimConfig& config() const;
  SimTransport& transport(int rank);
  Time now() const;

  // Processes the next event; false if none is pending.
  bool step();
  // Processes events until none is pending.
  void run();
  // Processes events until pred() holds (checked before each event), none is
  // pending, or the next event is later than `deadline`. Returns pred().
  bool run_until(const std::function<bool()>& pred, Time deadline = kNever);
  // Processes events until stop() was called (from a callback), none is
  // pending, the next is later than `deadline`, or `max_events` were
  // processed; returns the number processed. A long run calls it in
  // batches and reports progress between them; nothing is checked per
  // event but the flag and the deadline.
  uint64_t run_some(uint64_t max_events, Time deadline = kNever);
  // Makes run_some return before the next event (it clears the request).
  void stop();
  bool idle() const;
  // Moves the clock forward with nothing to do (block() on an idle world).
  void advance(Time by);

  // Rank `rank` departs at virtual time `at` (>= now): from then on receives
  // from it complete with Errc::peer_failed, sends to it fail likewise, and
  // its undelivered messages are dropped.
  void fail(int rank, Time at);
  bool failed(int rank) const;

  // Not owned; nullptr to stop tracing.
  void set_trace(TraceSink* sink);
  // Called with a rank after a completion or AM handler of that rank ran
  // (nullptr: nobody is). A plain function: it runs after every completion.
  using ActivityFn = void (*)(void* context, int rank);
  void set_activity_observer(ActivityFn observer, void* context);
  // For completions by `done`: the engine calls prefetch(context) a few
  // events before it completes the send or receive, so the completion's
  // first loads are under way when it runs (prefetch.cpp). A hint: it must
  // read only what it prefetches from and change nothing. nullptr: none.
  using PrefetchFn = void (*)(const void* context);
  void set_completion_prefetch(CompletionFn done, PrefetchFn prefetch);

  const Stats& stats() const;
  // Posted receives and unmatched messages of `rank`, for error messages.
  std::string describe_pending(int rank) const;

  // Bytes the world holds per rank (with its share of its node), per
  // message in flight of `bytes` bytes (with its events), and per posted
  // receive: for the memory estimate of a run before it starts.
  static size_t rank_footprint(const SimConfig& config);
  static size_t message_footprint(const SimConfig& config, uint64_t bytes);
  static size_t receive_footprint();
  static size_t stream_footprint();  // per (receiver, sender) with receives waiting

  struct Impl;  // sim_world_impl.hpp

 private:
  friend class SimTransport;
  std::unique_ptr<Impl> impl_;
};

}  // namespace grove::sim
