#pragma once
// SimWorld's internals, shared by sim_world.cpp (the event engine, the
// network stages and matching a delivered message) and sim_transport.cpp
// (the Transport calls: posting, receives matching arrived messages,
// cancel, probe, active messages).

#include <cstdint>
#include <deque>
#include <functional>
#include <unordered_map>
#include <vector>

#include "transport/sim/event_queue.hpp"
#include "transport/sim/recv_queue.hpp"
#include "transport/sim/sim_world.hpp"
#include "transport/sim/stream_table.hpp"

namespace grove::sim {

inline constexpr uint32_t kNone = UINT32_MAX;
static_assert(kNone == kNoStream);

struct SimWorld::Impl {
  // A message in flight, one cache line. Pooled; `refs` counts the two
  // things that still need it: the sender's completion and the delivery.
  // Its bytes (real mode, active messages), its arrival number (while it
  // waits unmatched) and the worker it holds (overlap == false) are kept
  // apart, in `payloads`, `orders` and `held`: most runs need none.
  struct alignas(64) Message {
    int32_t src = -1;
    int32_t dst = -1;
    Tag tag = 0;  // an AM's handler id
    uint64_t length = 0;
    Time posted = 0;
    Time wire = 0;
    CompletionFn done = nullptr;
    void* context = nullptr;
    uint32_t next = kNone;  // FIFO link (pending sends, unexpected queue)
    uint8_t refs = 0;
    bool am = false;
    bool send_failed = false;  // the send completes with Errc::peer_failed
    // How the send completes.
    Status send_status() const {
      return send_failed ? Status{false, Errc::peer_failed, 0}
                         : Status{true, Errc::internal, length};
    }
  };
  static_assert(sizeof(Message) == 64);

  // A matched receive waiting for its completion time (posted ones wait
  // packed, in their stream).
  struct Receive {
    int32_t dst = -1;
    int32_t src = -1;
    Tag tag = 0;
    std::byte* data = nullptr;
    size_t capacity = 0;
    CompletionFn done = nullptr;
    void* context = nullptr;
    Status status;  // set when matched, reported at completion time
  };

  using Key = StreamKey;

  enum class EventKind : uint8_t {
    egress_ready,   // software done (or started, pLogP): queue for the NIC
    head_arrival,   // first byte at the receiving node: queue for ingress
    deliver,        // last byte arrived: match or deliver the AM
    send_done,      // last byte left the sender: complete the send
    recv_complete,  // a matched receive's completion time has come
    am_handle,      // run an AM's handler
    fail,           // a rank departs
  };
  static_assert(static_cast<int>(EventKind::fail) < EventQueue::kKinds);
  // The per-rank state every message reads is SimRankState, in the rank's
  // transport; this is the rest.
  using RankState = SimRankState;
  struct RankCold {
    uint32_t pending_head = kNone;  // sends waiting for a worker (overlap == false)
    uint32_t pending_tail = kNone;
    bool failed = false;
  };

  Impl(SimWorld* world, int size, SimConfig config);

  // --- engine (sim_world.cpp)
  void push(Time time, EventKind kind, uint32_t id) {
    events.push(time, next_seq++, id, static_cast<uint8_t>(kind));
  }
  bool step();
  // Prefetches what the next few events will read (prefetch.cpp).
  void prefetch_ahead();
  // A delivery reads its stream's first two lines.
  void prefetch_stream(uint32_t sid) const {
    const auto* lines = reinterpret_cast<const char*>(&streams.at(sid));
    __builtin_prefetch(lines);
    __builtin_prefetch(lines + 64);
  }
  void handle(const Taken& e);                            // an event taken from the queue
  uint64_t run_some(uint64_t max_events, Time deadline);  // SimWorld::run_some
  void dispatch_send(uint32_t id);
  void on_egress_ready(uint32_t id);
  void on_head_arrival(uint32_t id);
  void on_deliver(uint32_t id);
  void record_trace(const Message& m);
  void deliver_am(uint32_t id);  // on_deliver for an active message
  // Matches message `mid` to receive `r` of rank `dst` at now; completes
  // inline when allowed and due now, else at the receive thread's time (a
  // Receive record waits for it then).
  void match(int dst, const PostedRecv& r, uint32_t mid, bool inline_ok);
  void on_recv_complete(uint32_t rid);
  void on_am_handle(uint32_t mid);
  Time receive_time(int rank, uint64_t bytes);
  void on_send_done(uint32_t id);
  void on_fail(int rank);
  void release_worker(uint32_t id);
  void release(uint32_t id);
  Time software_cost(uint64_t bytes) {
    // Without jitter Hockney's cost is a constant.
    return plain_copy ? copy_ps : jittered_cost(bytes);
  }
  Time jittered_cost(uint64_t bytes);
  Time wire_time(uint64_t bytes) {
    // Collectives send runs of equal lengths: the last one's time is kept.
    if (bytes != wire_memo_bytes) compute_wire_time(bytes);
    return wire_memo;
  }
  // What a message of `bytes` adds to the latency (compute_wire_time).
  Time extra_latency(uint64_t bytes) {
    if (bytes != wire_memo_bytes) compute_wire_time(bytes);
    return extra_latency_memo;
  }
  void compute_wire_time(uint64_t bytes);
  Time latency() const { return latency_ps; }
  int node_of(int rank) const { return one_per_node ? rank : rank / config.ranks_per_node; }
  // Whether `rank` departed (SimWorld::fail); one test while none has.
  bool departed(int rank) const { return any_departed && cold[static_cast<size_t>(rank)].failed; }
  RankState& rank_state(int rank) { return transports[static_cast<size_t>(rank)].state(); }
  const RankState& rank_state(int rank) const {
    return transports[static_cast<size_t>(rank)].state();
  }
  // When worker `w` of `rank` is next free.
  Time& worker_time(int rank, int w) {
    return w == 0 ? rank_state(rank).worker0
                  : workers[static_cast<size_t>(rank) * static_cast<size_t>(threads - 1) +
                            static_cast<size_t>(w - 1)];
  }
  void notify(int rank) {
    if (observer) observer(observer_context, rank);
  }

  // --- matching and the Transport calls (sim_transport.cpp)
  // The stream (dst, src), or kNone.
  uint32_t stream_of(int dst, int src) const {
    const RankState& r = rank_state(dst);
    return r.cached_src == src ? r.cached_stream : streams.find(Key{dst, src});
  }
  // The stream (dst, src), made if there is none; it becomes dst's cached one.
  uint32_t stream_for(int dst, int src);
  // After something was taken from stream `sid` (dst, src): removes it
  // when it holds nothing and is not cached. The cached one may now be
  // empty: it is no longer known busy (RankState::cached_busy), and is
  // read only if the cache moves before something is put into it again.
  void drop_if_unused(uint32_t sid, int dst, int src) {
    RankState& rank = rank_state(dst);
    if (rank.cached_stream == sid)
      rank.cached_busy = false;
    else if (streams.at(sid).empty())
      streams.remove(sid, Key{dst, src});
  }
  // After something was put into stream `sid` of `dst`.
  void mark_used(uint32_t sid, int dst) {
    RankState& rank = rank_state(dst);
    if (rank.cached_stream == sid) rank.cached_busy = true;
  }
  // Unlinks the oldest arrived message of `tag` from `stream`: its id, or kNone.
  uint32_t take_arrived(Stream& stream, Tag tag);
  uint32_t new_message();
  uint32_t new_receive();
  // A Receive record for a posted receive of `dst` from `src` on `tag`.
  uint32_t new_receive(int dst, int src, Tag tag, const PostedRecv& posted);
  void post_send(int src, int dst, Tag tag, const void* data, size_t length, CompletionFn done,
                 void* context);
  void post_recv(int dst, int src, Tag tag, void* data, size_t capacity, CompletionFn done,
                 void* context);
  void post_am(int src, int dst, uint16_t id, std::span<const std::byte> payload);
  void cancel_recv(int dst, int src, Tag tag, void* context);
  void set_handler(int rank, uint16_t id, AmHandler handler);
  std::optional<Transport::Probe> probe(int rank, int peer, Tag tag, Tag mask) const;
  void check_peer(int rank, int peer, const char* what) const {
    if (peer < 0 || peer >= size) [[unlikely]]
      bad_peer(rank, peer, what);
  }
  [[noreturn]] void bad_peer(int rank, int peer, const char* what) const;
  // Live streams ordered by (dst, src), and a stream's receives and
  // messages ordered by tag, then posting or arrival: scans whose effects or
  // output must not depend on the table's layout.
  std::vector<uint32_t> sorted_streams() const;
  std::vector<PostedRecv> posted_by_tag(uint32_t sid) const;
  std::vector<uint32_t> arrived_by_tag(uint32_t sid) const;

  SimWorld* world;
  SimConfig config;
  int size;
  int threads;
  Time now = 0;
  uint64_t next_seq = 0;
  uint64_t next_order = 0;
  uint64_t rng;
  Time copy_ps;
  bool plain_copy;  // Hockney without jitter: every send's software costs copy_ps
  bool fast_send;   // plain_copy with overlap: a send with worker 0 free is ready at now + copy_ps
  uint64_t wire_memo_bytes = UINT64_MAX;
  Time wire_memo = 0;
  Time extra_latency_memo = 0;  // pLogP with gap_posted rows: g(m) - u(m)
  Time recv_ps;
  Time latency_ps;
  Time shm_latency_ps;
  double ps_per_byte;
  double shm_ps_per_byte;

  EventQueue events;                     // ordered by (time, seq): insertion order breaks ties
  bool one_per_node;                     // config.ranks_per_node == 1: a rank is its node
  std::vector<SimTransport> transports;  // with each rank's RankState
  std::vector<RankCold> cold;
  std::vector<Time> workers;  // ranks x (threads - 1): when workers 1.. are next free
  std::vector<Time> egress_free;
  std::vector<Time> ingress_free;

  std::vector<Message> messages;
  std::vector<uint32_t> free_messages;
  // Per message id, grown on first use: the bytes it carries (real mode,
  // AMs) and its arrival number while it waits unmatched (for probe).
  std::vector<std::vector<std::byte>> payloads;
  std::vector<uint64_t> orders;
  std::vector<uint32_t> held;  // the worker a message holds (overlap == false), or kNone
  std::vector<std::byte>& payload_of(uint32_t id) {
    if (payloads.size() <= id) payloads.resize(messages.size());
    return payloads[id];
  }
  std::vector<Receive> receives;
  std::vector<uint32_t> free_receives;
  StreamTable streams;  // posted receives and unmatched messages per (dst, src, tag)
  std::unordered_map<uint64_t, AmHandler> handlers;             // (rank << 16 | id)
  std::unordered_map<uint64_t, std::deque<uint32_t>> held_ams;  // no handler yet

  TraceSink* trace = nullptr;
  SimWorld::ActivityFn observer = nullptr;
  void* observer_context = nullptr;
  // SimWorld::set_completion_prefetch: called for completions by prefetch_done.
  CompletionFn prefetch_done = nullptr;
  SimWorld::PrefetchFn prefetch_completion = nullptr;
  void prefetch_completion_of(CompletionFn done, const void* context) const {
    if (done == prefetch_done && done != nullptr) prefetch_completion(context);
  }
  bool stop_requested = false;  // SimWorld::stop()
  bool any_departed = false;    // some rank's RankState::failed is set
  Stats stats;
};

}  // namespace grove::sim
