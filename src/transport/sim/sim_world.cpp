// The event engine, the network stages of the model in sim_config.hpp and
// matching a delivered message: the per-message path, in one file so the
// event loop inlines it.

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "grove/error.hpp"
#include "transport/sim/sim_world_impl.hpp"

namespace grove::sim {

SimWorld::Impl::Impl(SimWorld* w, int n, SimConfig c)
    : world(w), config(std::move(c)), size(n), threads(config.threads) {
  rng = config.seed ^ 0x5DEECE66Dull;
  const bool plogp = config.model == CostModel::plogp;
  copy_ps = from_micros(config.copy_us);
  plain_copy = !plogp && config.jitter <= 0;
  fast_send = plain_copy && config.overlap;
  recv_ps = from_micros(config.recv_us);
  latency_ps = from_micros(plogp ? config.plogp->latency_us() : config.alpha_us);
  shm_latency_ps = from_micros(config.shm_alpha_us);
  // 8 bits a byte, bandwidth in 10^9 bit/s: 8000 / Gbit/s picoseconds a byte.
  ps_per_byte = 8000.0 / config.bandwidth_gbps;
  shm_ps_per_byte = 8000.0 / config.shm_bandwidth_gbps;
  const int nodes = (n + config.ranks_per_node - 1) / config.ranks_per_node;
  transports.reserve(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r)
    transports.emplace_back(w, r);
  one_per_node = config.ranks_per_node == 1;
  cold.resize(static_cast<size_t>(n));
  workers.assign(static_cast<size_t>(n) * static_cast<size_t>(threads - 1), 0);
  egress_free.assign(static_cast<size_t>(nodes), 0);
  ingress_free.assign(static_cast<size_t>(nodes), 0);
}

// Flattened, as run_some: the event handlers are inlined where events are taken.
[[gnu::flatten]] bool SimWorld::Impl::step() {
  if (events.empty()) return false;
  const Taken e = events.pop();
  prefetch_ahead();
  now = e.time;
  ++stats.events;
  switch (static_cast<EventKind>(e.kind)) {
    case EventKind::egress_ready:
      on_egress_ready(e.id);
      break;
    case EventKind::head_arrival:
      on_head_arrival(e.id);
      break;
    case EventKind::deliver:
      on_deliver(e.id);
      break;
    case EventKind::send_done:
      on_send_done(e.id);
      break;
    case EventKind::recv_complete:
      on_recv_complete(e.id);
      break;
    case EventKind::am_handle:
      on_am_handle(e.id);
      break;
    case EventKind::fail:
      on_fail(static_cast<int>(e.id));
      break;
  }
  return true;
}

[[gnu::flatten]] uint64_t SimWorld::Impl::run_some(uint64_t max_events, Time deadline) {
  uint64_t done = 0;
  // Without a deadline the loop tests nothing per event but the count,
  // the stop flag and the queue.
  if (deadline == kNever) {
    while (done < max_events && !stop_requested && !events.empty()) {
      step();
      ++done;
    }
  } else {
    while (done < max_events && !stop_requested && !events.empty() &&
           events.top_time() <= deadline) {
      step();
      ++done;
    }
  }
  stop_requested = false;
  return done;
}

[[gnu::noinline]] Time SimWorld::Impl::jittered_cost(uint64_t bytes) {
  Time cost = config.model == CostModel::plogp
                  ? from_micros(config.plogp->os_us(static_cast<double>(bytes)))
                  : copy_ps;
  if (config.jitter > 0) {
    // splitmix64: one draw per send, in posting order, so runs repeat exactly.
    rng += 0x9E3779B97F4A7C15ull;
    uint64_t z = rng;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const double u = static_cast<double>(z >> 11) * 0x1.0p-53;
    cost += static_cast<Time>(std::llround(static_cast<double>(cost) * config.jitter * u));
  }
  return cost;
}

// pLogP: the port model's gap u(m) (the table's g(m), or the gap of sends
// posted together where that is shorter) and the rest of g(m), which a
// message spends after its sender let go: added to its latency.
[[gnu::noinline]] void SimWorld::Impl::compute_wire_time(uint64_t bytes) {
  wire_memo_bytes = bytes;
  extra_latency_memo = 0;
  if (config.model != CostModel::plogp) {
    wire_memo = static_cast<Time>(std::llround(static_cast<double>(bytes) * ps_per_byte));
    return;
  }
  const auto m = static_cast<double>(bytes);
  wire_memo = from_micros(config.plogp->send_gap_us(m));
  if (config.plogp->has_posted_gap())
    extra_latency_memo = from_micros(config.plogp->handshake_us(m));
}

// Stage 1: a worker thread takes the send: the one free first, or worker 0
// when it is free now. Which of several free workers takes it changes
// nothing: a worker's time is only ever used as max(now, free time), so
// workers free by now are interchangeable. Egress-ready times of one rank
// never decrease, which with the FIFO NIC stages keeps every pair's
// messages in sending order.
void SimWorld::Impl::dispatch_send(uint32_t id) {
  Message& m = messages[id];
  RankState& rank = rank_state(m.src);
  Time* best = &rank.worker0;
  int best_index = 0;
  if (*best > now) {
    Time* others = workers.data() + static_cast<size_t>(m.src) * static_cast<size_t>(threads - 1);
    for (int w = 1; w < threads; ++w) {
      if (others[w - 1] < *best) {
        best = &others[w - 1];
        best_index = w;
      }
    }
  }
  if (*best == kNever) {  // every worker holds a message on the wire
    RankCold& waiting = cold[static_cast<size_t>(m.src)];
    m.next = kNone;
    if (waiting.pending_tail == kNone)
      waiting.pending_head = id;
    else
      messages[waiting.pending_tail].next = id;
    waiting.pending_tail = id;
    return;
  }
  const Time start = std::max(now, *best);
  const Time done = start + software_cost(m.length);
  if (config.overlap) {
    *best = done;
  } else {
    *best = kNever;
    if (held.size() <= id) held.resize(messages.size(), kNone);
    held[id] = static_cast<uint32_t>(best_index);
  }
  Time ready = config.model == CostModel::plogp ? start : done;
  ready = std::max(ready, rank.last_ready);
  rank.last_ready = ready;
  push(ready, EventKind::egress_ready, id);
}

// Stage 2: the node's NIC egress, FIFO in order of readiness.
void SimWorld::Impl::on_egress_ready(uint32_t id) {
  Message& m = messages[id];
  if (departed(m.src)) {
    stats.dropped++;
    m.refs = 1;
    release(id);
    return;
  }
  if (departed(m.dst)) {
    m.send_failed = true;
    stats.dropped++;
    m.refs = 1;  // no delivery
    push(now, EventKind::send_done, id);
    return;
  }
  const int src_node = node_of(m.src);
  if (src_node == node_of(m.dst)) {
    // Intra-node: no NIC; in order per sender.
    RankState& rank = rank_state(m.src);
    const Time arrive = std::max(
        now + shm_latency_ps +
            static_cast<Time>(std::llround(static_cast<double>(m.length) * shm_ps_per_byte)),
        rank.shm_last);
    rank.shm_last = arrive;
    m.wire = now;
    push(arrive, EventKind::send_done, id);
    push(arrive, EventKind::deliver, id);
    return;
  }
  Time& free = egress_free[static_cast<size_t>(src_node)];
  const Time start = std::max(now, free);
  free = start + wire_time(m.length);
  m.wire = start;
  push(free, EventKind::send_done, id);
  push(start + latency_ps + extra_latency(m.length), EventKind::head_arrival, id);
}

// Stage 4: the receiving node's ingress, FIFO in order of first-byte arrival.
void SimWorld::Impl::on_head_arrival(uint32_t id) {
  const Message& m = messages[id];
  Time& free = ingress_free[static_cast<size_t>(node_of(m.dst))];
  free = std::max(now, free) + wire_time(m.length);
  push(free, EventKind::deliver, id);
}

Time SimWorld::Impl::receive_time(int rank, uint64_t bytes) {
  Time& free = rank_state(rank).rx_free;
  if (config.model == CostModel::plogp) {
    const Time at = std::max(now, free);
    free = at + from_micros(config.plogp->or_us(static_cast<double>(bytes)));
    return at;
  }
  free = std::max(now, free) + recv_ps;
  return free;
}

// Out of line: the per-message path inlines around them.
[[gnu::noinline]] void SimWorld::Impl::record_trace(const Message& m) {
  trace->record(TraceRecord{m.posted, m.wire, now, m.src, m.dst, m.length,
                            m.am ? static_cast<uint32_t>(m.tag) : tag::channel(m.tag), m.am});
}

[[gnu::noinline]] void SimWorld::Impl::deliver_am(uint32_t id) {
  const Message& m = messages[id];
  const uint64_t key = static_cast<uint64_t>(m.dst) << 16 | m.tag;
  if (handlers.count(key) == 0) {
    held_ams[key].push_back(id);
    return;
  }
  const Time at = receive_time(m.dst, m.length);
  if (at == now)
    on_am_handle(id);
  else
    push(at, EventKind::am_handle, id);
}

// Stage 5: the message's last byte is at the receiver.
void SimWorld::Impl::on_deliver(uint32_t id) {
  Message& m = messages[id];
  const int dst = m.dst;
  if (departed(m.src) || departed(dst)) {
    stats.dropped++;
    release(id);
    return;
  }
  if (trace) record_trace(m);
  if (m.am) {
    deliver_am(id);
    return;
  }
  uint32_t sid = stream_of(dst, m.src);
  if (sid != kNone) {
    PostedRecv r;
    if (streams.at(sid).posted.take(m.tag, r)) {
      drop_if_unused(sid, dst, m.src);
      match(dst, r, id, true);
      return;
    }
  }
  if (orders.size() <= id) orders.resize(messages.size());
  orders[id] = next_order++;
  m.next = kNone;
  if (sid == kNone) sid = stream_for(dst, m.src);
  Stream& stream = streams.at(sid);
  if (stream.arrived_tail == kNone)
    stream.arrived_head = id;
  else
    messages[stream.arrived_tail].next = id;
  stream.arrived_tail = id;
  mark_used(sid, dst);
}

void SimWorld::Impl::match(int dst, const PostedRecv& r, uint32_t mid, bool inline_ok) {
  const Message& m = messages[mid];
  Status status{true, Errc::internal, m.length};
  size_t copy = m.length;
  if (m.length > r.capacity) {
    // Like UCX and MPI: the first `capacity` bytes land, the receive fails.
    status = Status{false, Errc::truncated, r.capacity};
    copy = r.capacity;
  }
  if (config.data == DataMode::real && copy > 0) std::memcpy(r.data, payloads[mid].data(), copy);
  stats.messages_received++;
  stats.bytes_received += m.length;
  const int src = m.src;
  const Tag tag = m.tag;
  const Time at = receive_time(dst, m.length);
  release(mid);
  if (inline_ok && at == now) {
    r.done(r.context, status);
    notify(dst);
    return;
  }
  const uint32_t rid = new_receive(dst, src, tag, r);
  receives[rid].status = status;
  push(at, EventKind::recv_complete, rid);
}

void SimWorld::Impl::on_recv_complete(uint32_t rid) {
  const Receive r = receives[rid];
  free_receives.push_back(rid);
  if (departed(r.dst)) return;
  r.done(r.context, r.status);
  notify(r.dst);
}

[[gnu::noinline]] void SimWorld::Impl::on_am_handle(uint32_t mid) {
  const int dst = messages[mid].dst;
  const int src = messages[mid].src;
  const uint64_t key = static_cast<uint64_t>(dst) << 16 | messages[mid].tag;
  if (departed(dst)) {
    release(mid);
    return;
  }
  auto it = handlers.find(key);
  if (it == handlers.end()) {  // unregistered meanwhile: hold until one is set
    held_ams[key].push_back(mid);
    return;
  }
  // A copy: the handler may replace itself. The payload's storage stays put
  // while the pool grows (vectors move their buffers).
  const AmHandler handler = it->second;
  const std::byte* data = payloads[mid].data();
  const size_t length = payloads[mid].size();
  stats.ams_delivered++;
  handler(src, std::span<const std::byte>(data, length));
  notify(dst);
  release(mid);
}

void SimWorld::Impl::release_worker(uint32_t id) {
  if (config.overlap || id >= held.size() || held[id] == kNone) return;
  const Message& m = messages[id];
  worker_time(m.src, static_cast<int>(held[id])) = now;
  held[id] = kNone;
  RankCold& waiting = cold[static_cast<size_t>(m.src)];
  if (waiting.pending_head != kNone) {
    const uint32_t next = waiting.pending_head;
    waiting.pending_head = messages[next].next;
    if (waiting.pending_head == kNone) waiting.pending_tail = kNone;
    dispatch_send(next);
  }
}

void SimWorld::Impl::on_send_done(uint32_t id) {
  Message& m = messages[id];
  release_worker(id);
  const int src = m.src;
  if (!departed(src) && m.done) {
    const Status status = m.send_status();
    CompletionFn done = m.done;
    void* context = m.context;
    release(id);  // before the callback, which may post (and grow the pool)
    done(context, status);
    notify(src);
    return;
  }
  release(id);
}

void SimWorld::Impl::release(uint32_t id) {
  Message& m = messages[id];
  if (--m.refs > 0) return;
  if (!payloads.empty() && id < payloads.size()) {  // empty() first: no division
    std::vector<std::byte>& payload = payloads[id];
    if (payload.capacity() > (1u << 20)) std::vector<std::byte>().swap(payload);
    payload.clear();
  }
  m.done = nullptr;
  if (!config.overlap && id < held.size()) held[id] = kNone;
  free_messages.push_back(id);
}

[[gnu::noinline]] void SimWorld::Impl::on_fail(int rank) {
  RankCold& state = cold[static_cast<size_t>(rank)];
  if (state.failed) return;
  state.failed = true;
  any_departed = true;
  // Receives posted for the departed rank, in a fixed order (by receiver,
  // sender, tag, then posting order) so the run stays deterministic.
  std::vector<uint32_t> touched;
  for (const uint32_t sid : sorted_streams()) {
    const Key& key = streams.key(sid);
    if ((key.src == rank || key.dst == rank) && !streams.at(sid).posted.empty())
      touched.push_back(sid);
  }
  for (const uint32_t sid : touched) {
    const Key key = streams.key(sid);
    const std::vector<PostedRecv> waiting = posted_by_tag(sid);
    streams.at(sid).posted = RecvQueue{};
    drop_if_unused(sid, key.dst, key.src);  // messages of other tags may still wait
    if (key.dst == rank) continue;          // the departed rank's own receives
    for (const PostedRecv& r : waiting) {
      const uint32_t rid = new_receive(key.dst, key.src, r.tag, r);
      receives[rid].status = Status{false, Errc::peer_failed, 0};
      push(now, EventKind::recv_complete, rid);
    }
  }
}

std::vector<PostedRecv> SimWorld::Impl::posted_by_tag(uint32_t sid) const {
  std::vector<PostedRecv> out = streams.at(sid).posted.list();
  std::stable_sort(out.begin(), out.end(),
                   [](const PostedRecv& a, const PostedRecv& b) { return a.tag < b.tag; });
  return out;
}

std::vector<uint32_t> SimWorld::Impl::arrived_by_tag(uint32_t sid) const {
  std::vector<uint32_t> out;
  for (uint32_t m = streams.at(sid).arrived_head; m != kNone; m = messages[m].next)
    out.push_back(m);
  std::stable_sort(out.begin(), out.end(),
                   [&](uint32_t a, uint32_t b) { return messages[a].tag < messages[b].tag; });
  return out;
}

// ---------------------------------------------------------------- SimWorld

SimWorld::SimWorld(int size, SimConfig config) {
  if (size < 1 || size > (1 << tag::kSourceBits)) {
    throw Error(Errc::invalid_argument,
                fmt::format("simulator: {} ranks is outside [1, {}]", size, 1 << tag::kSourceBits));
  }
  config.validate();
  impl_ = std::make_unique<Impl>(this, size, std::move(config));
}

SimWorld::~SimWorld() = default;

int SimWorld::size() const {
  return impl_->size;
}
const SimConfig& SimWorld::config() const {
  return impl_->config;
}
SimTransport& SimWorld::transport(int rank) {
  if (rank < 0 || rank >= impl_->size)
    throw Error(Errc::invalid_argument,
                fmt::format("simulator: rank {} is outside [0, {})", rank, impl_->size));
  return impl_->transports[static_cast<size_t>(rank)];
}
Time SimWorld::now() const {
  return impl_->now;
}
bool SimWorld::step() {
  return impl_->step();
}
void SimWorld::run() {
  while (impl_->step()) {
  }
}
bool SimWorld::run_until(const std::function<bool()>& pred, Time deadline) {
  while (!pred()) {
    if (impl_->events.empty() || (deadline != kNever && impl_->events.top_time() > deadline))
      return pred();
    impl_->step();
  }
  return true;
}
uint64_t SimWorld::run_some(uint64_t max_events, Time deadline) {
  return impl_->run_some(max_events, deadline);
}
void SimWorld::stop() {
  impl_->stop_requested = true;
}
bool SimWorld::idle() const {
  return impl_->events.empty();
}
void SimWorld::advance(Time by) {
  if (by > 0) impl_->now += by;
}
void SimWorld::fail(int rank, Time at) {
  transport(rank);  // range check
  impl_->push(std::max(at, impl_->now), Impl::EventKind::fail, static_cast<uint32_t>(rank));
}
bool SimWorld::failed(int rank) const {
  return impl_->cold.at(static_cast<size_t>(rank)).failed;
}
void SimWorld::set_trace(TraceSink* sink) {
  impl_->trace = sink;
}
void SimWorld::set_activity_observer(ActivityFn observer, void* context) {
  impl_->observer = observer;
  impl_->observer_context = context;
}
void SimWorld::set_completion_prefetch(CompletionFn done, PrefetchFn prefetch) {
  impl_->prefetch_done = done;
  impl_->prefetch_completion = prefetch;
}
const SimWorld::Stats& SimWorld::stats() const {
  return impl_->stats;
}

size_t SimWorld::rank_footprint(const SimConfig& config) {
  const size_t per_node = 2 * sizeof(Time);  // egress and ingress
  // With the stream it keeps cached (RankState::cached_stream).
  return sizeof(SimTransport) + sizeof(Impl::RankCold) + stream_footprint() +
         static_cast<size_t>(config.threads - 1) * sizeof(Time) +
         (per_node + static_cast<size_t>(config.ranks_per_node) - 1) /
             static_cast<size_t>(config.ranks_per_node);
}

size_t SimWorld::message_footprint(const SimConfig& config, uint64_t bytes) {
  // A message has at most two events queued at once (send_done and
  // head_arrival), and the free list keeps its slot's index.
  const size_t copy = config.data == DataMode::real
                          ? static_cast<size_t>(bytes) + sizeof(std::vector<std::byte>)
                          : 0;
  return sizeof(Impl::Message) + 2 * sizeof(Event) + sizeof(uint32_t) + copy;
}

size_t SimWorld::stream_footprint() {
  // The stream and its key, and its table slot (key and stream id) at the
  // table's lowest load.
  return sizeof(Stream) + sizeof(StreamKey) + 4 * (sizeof(StreamKey) + sizeof(uint32_t));
}

size_t SimWorld::receive_footprint() {
  // At most: a receive that does not repeat its predecessor's step packs
  // to a flag byte and one or two short differences (recv_queue.hpp), with
  // the queue's growth by doubling. A repeat (most of a ring's) costs
  // nothing: runs are counts.
  return 6;
}

std::vector<uint32_t> SimWorld::Impl::sorted_streams() const {
  std::vector<uint32_t> out = streams.live();
  std::sort(out.begin(), out.end(), [&](uint32_t x, uint32_t y) {
    const Key& a = streams.key(x);
    const Key& b = streams.key(y);
    return a.dst != b.dst ? a.dst < b.dst : a.src < b.src;
  });
  return out;
}

std::string SimWorld::describe_pending(int rank) const {
  std::string out;
  const std::vector<uint32_t> streams = impl_->sorted_streams();
  for (const uint32_t sid : streams) {
    const Impl::Key& key = impl_->streams.key(sid);
    if (key.dst != rank) continue;
    for (const PostedRecv& r : impl_->posted_by_tag(sid))
      out += fmt::format("{}recv from {} channel {} ({} bytes)", out.empty() ? "" : "; ", key.src,
                         tag::channel(r.tag), r.capacity);
  }
  for (const uint32_t sid : streams) {
    const Impl::Key& key = impl_->streams.key(sid);
    if (key.dst != rank) continue;
    for (const uint32_t m : impl_->arrived_by_tag(sid))
      out +=
          fmt::format("{}unmatched message from {} channel {} ({} bytes)", out.empty() ? "" : "; ",
                      key.src, tag::channel(impl_->messages[m].tag), impl_->messages[m].length);
  }
  return out.empty() ? "nothing pending" : out;
}

}  // namespace grove::sim
