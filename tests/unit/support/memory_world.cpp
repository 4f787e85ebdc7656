#include "support/memory_world.hpp"

#include <poll.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "transport/rma_local.hpp"

namespace grove {

namespace {

class MemoryTransport;

struct Message {
  int source = -1;
  Tag tag = 0;
  size_t length = 0;
  std::vector<std::byte> data;  // eager and immediate modes: a copy
  // Rendezvous mode: the sender's buffer (valid until its send completes)
  // and the sender's completion, run when a receive matches.
  const std::byte* sender_data = nullptr;
  CompletionFn send_done = nullptr;
  void* send_context = nullptr;
};

struct PostedRecv {
  int source = -1;
  Tag tag = 0;
  std::byte* data = nullptr;
  size_t capacity = 0;
  CompletionFn done = nullptr;
  void* context = nullptr;
};

struct Completion {
  CompletionFn done = nullptr;
  void* context = nullptr;
  Status status;
  bool is_send = false;
  bool rma = false;  // not counted as a send or receive in flight
};

// Heap memory registered for RMA; its key is [u64 rank][u64 address][u64 size].
class MemoryRegion final : public RmaRegion {
 public:
  MemoryRegion(int rank, size_t bytes)
      : storage_((std::max<size_t>(bytes, 8) + kAlignment) / 8 + 1) {
    // Cache-line aligned, as UCX regions are (a ring's credit lines are
    // alignas(64) objects placed in it).
    const auto address = reinterpret_cast<uintptr_t>(storage_.data());
    data_ = reinterpret_cast<std::byte*>((address + kAlignment - 1) / kAlignment * kAlignment);
    size_ = bytes;
    const uint64_t key[3] = {static_cast<uint64_t>(rank), reinterpret_cast<uintptr_t>(data_),
                             bytes};
    key_.resize(sizeof(key));
    std::memcpy(key_.data(), key, sizeof(key));
  }

 private:
  static constexpr uintptr_t kAlignment = 64;
  std::vector<uint64_t> storage_;  // zeroed; data_ is its first 64-byte boundary
};

class MemoryTarget final : public RmaTarget {
 public:
  MemoryTarget(int peer, std::byte* memory, size_t size, bool mapped)
      : peer_(peer), memory_(memory) {
    size_ = size;
    mapped_ = mapped ? memory : nullptr;
  }
  int peer() const { return peer_; }
  std::byte* memory() const { return memory_; }

 private:
  int peer_;
  std::byte* memory_;
};

struct ActiveMessage {
  int source = -1;
  uint16_t id = 0;
  std::vector<std::byte> payload;
};

using StreamKey = std::pair<int, Tag>;

// Removes and returns the front of map[key]'s queue, if any.
template <class T>
std::optional<T> take_front(std::map<StreamKey, std::deque<T>>& map, const StreamKey& key) {
  auto it = map.find(key);
  if (it == map.end()) return std::nullopt;
  T front = std::move(it->second.front());
  it->second.pop_front();
  if (it->second.empty()) map.erase(it);
  return front;
}

// A one-sided operation to a target whose RMA is held (hold_rma): neither
// performed nor complete until release_rma, or failed by fail_peer.
struct HeldRma {
  int peer = -1;
  std::function<void()> act;
  Completion completion;
};

struct RankState {
  std::deque<Message> in_transit;  // sent to this rank, not yet arrived
  std::deque<HeldRma> held;        // issued by this rank to a held target
  bool rma_held = false;           // one-sided operations to this rank wait
  // Keyed by (source, tag); each queue is in arrival (posting) order, so
  // matching is FIFO per stream. Empty queues are erased.
  std::map<StreamKey, std::deque<Message>> unexpected;  // arrived, not yet matched
  std::map<StreamKey, std::deque<PostedRecv>> posted;
  std::deque<ActiveMessage> ams;  // sent to this rank, not yet handled
  std::deque<Completion> completions;
  std::map<uint16_t, AmHandler> handlers;
  bool departed = false;
  uint64_t departures_seen = 0;
  MemoryWorld::Stats stats;
  std::condition_variable wakeup;
  std::unique_ptr<MemoryTransport> transport;
};

std::string describe_tag(Tag t) {
  return fmt::format("tag 0x{:x} (seq {}, stamp {}, channel {})", t, tag::sequence(t),
                     tag::stamp(t), tag::channel(t));
}

}  // namespace

struct MemoryWorld::State {
  int size = 0;
  Options options;
  mutable std::mutex mutex;
  std::vector<RankState> ranks;
  std::mt19937_64 rng;
  uint64_t departures = 0;

  void check_peer(int peer, std::string_view what) const {
    if (peer < 0 || peer >= size) {
      throw Error(Errc::invalid_argument,
                  fmt::format("MemoryWorld {}: peer {} is outside [0, {})", what, peer, size));
    }
  }

  static void account_completion(RankState& rs, const Completion& c) {
    if (c.rma) return;
    if (c.is_send)
      --rs.stats.sends_in_flight;
    else
      --rs.stats.recvs_in_flight;
  }

  // Fills a receive from a matched message; queues the completions of the
  // receive (on `receiver`) and, in rendezvous mode, of the send.
  void match(int receiver, const PostedRecv& recv, Message& message) {
    const size_t copied = std::min(message.length, recv.capacity);
    const std::byte* from = message.sender_data ? message.sender_data : message.data.data();
    if (options.carries_payload && copied > 0) std::memcpy(recv.data, from, copied);
    Completion c{recv.done, recv.context, Status{}, false};
    c.status.length = message.length;
    if (message.length > recv.capacity) {
      c.status.ok = false;
      c.status.code = Errc::truncated;
    }
    ranks[receiver].completions.push_back(c);
    if (message.send_done != nullptr) {
      RankState& sender = ranks[message.source];
      sender.completions.push_back(Completion{message.send_done, message.send_context,
                                              Status{true, Errc::internal, message.length}, true});
      sender.wakeup.notify_all();
    }
  }

  bool has_work(int rank) const {
    const RankState& rs = ranks[rank];
    return !rs.in_transit.empty() || !rs.completions.empty() || !rs.ams.empty() ||
           rs.departures_seen != departures;
  }

  // Moves arrived messages out of in_transit, in an order that keeps each
  // (source, tag) stream FIFO. Without a seed everything arrives in order.
  std::vector<Message> take_arrivals(RankState& rs) {
    std::vector<Message> arrivals;
    if (options.seed == 0) {
      arrivals.assign(std::make_move_iterator(rs.in_transit.begin()),
                      std::make_move_iterator(rs.in_transit.end()));
      rs.in_transit.clear();
      return arrivals;
    }
    // Hold back about a quarter of the streams' heads (and everything behind
    // them in their stream), then interleave the arriving streams randomly.
    std::map<std::pair<int, Tag>, std::deque<Message>> streams;
    std::vector<std::pair<int, Tag>> held;
    std::deque<Message> kept;
    for (Message& m : rs.in_transit) {
      const auto key = std::make_pair(m.source, m.tag);
      if (std::find(held.begin(), held.end(), key) != held.end() || rng() % 4 == 0) {
        if (std::find(held.begin(), held.end(), key) == held.end()) held.push_back(key);
        kept.push_back(std::move(m));
      } else {
        streams[key].push_back(std::move(m));
      }
    }
    rs.in_transit = std::move(kept);
    std::vector<std::deque<Message>*> open;
    for (auto& [key, queue] : streams)
      open.push_back(&queue);
    while (!open.empty()) {
      const size_t pick = rng() % open.size();
      arrivals.push_back(std::move(open[pick]->front()));
      open[pick]->pop_front();
      if (open[pick]->empty()) {
        open[pick] = open.back();
        open.pop_back();
      }
    }
    return arrivals;
  }

  bool progress(int rank);
};

namespace {

class MemoryTransport final : public Transport {
 public:
  MemoryTransport(MemoryWorld::State& world, int rank) : world_(world), rank_(rank) {}

  int rank() const override { return rank_; }
  int size() const override { return world_.size; }
  std::string name() const override { return "memory"; }
  bool carries_payload() const override { return world_.options.carries_payload; }

  void send(int peer, Tag tag, const void* data, size_t length, CompletionFn done,
            void* context) override {
    world_.check_peer(peer, "send");
    const auto mode = world_.options.send_mode;
    std::unique_lock lock(world_.mutex);
    RankState& self = world_.ranks[rank_];
    RankState& target = world_.ranks[peer];
    self.stats.sends_posted++;
    self.stats.bytes_sent += length;
    self.stats.max_sends_in_flight =
        std::max(self.stats.max_sends_in_flight, ++self.stats.sends_in_flight);
    Completion completion{done, context, Status{true, Errc::internal, length}, true};
    if (target.departed) {
      completion.status.ok = false;
      completion.status.code = Errc::peer_failed;
      self.completions.push_back(completion);
      return;
    }
    Message m;
    m.source = rank_;
    m.tag = tag;
    m.length = length;
    if (mode == MemoryWorld::SendMode::rendezvous) {
      m.sender_data = static_cast<const std::byte*>(data);
      m.send_done = done;
      m.send_context = context;
    } else if (world_.options.carries_payload) {
      const auto* bytes = static_cast<const std::byte*>(data);
      m.data.assign(bytes, bytes + length);
    }
    target.in_transit.push_back(std::move(m));
    target.wakeup.notify_all();
    if (mode == MemoryWorld::SendMode::eager) {
      self.completions.push_back(completion);
    } else if (mode == MemoryWorld::SendMode::immediate) {
      MemoryWorld::State::account_completion(self, completion);
      lock.unlock();
      done(context, completion.status);
    }
  }

  void recv(int peer, Tag tag, void* data, size_t capacity, CompletionFn done,
            void* context) override {
    world_.check_peer(peer, "recv");
    std::unique_lock lock(world_.mutex);
    RankState& self = world_.ranks[rank_];
    self.stats.recvs_posted++;
    self.stats.max_recvs_in_flight =
        std::max(self.stats.max_recvs_in_flight, ++self.stats.recvs_in_flight);
    const PostedRecv posted{peer, tag, static_cast<std::byte*>(data), capacity, done, context};
    std::optional<Message> message = take_front(self.unexpected, {peer, tag});
    if (!message) {
      self.posted[{peer, tag}].push_back(posted);
      return;
    }
    world_.match(rank_, posted, *message);
    self.wakeup.notify_all();
    if (world_.options.send_mode == MemoryWorld::SendMode::immediate) {
      const Completion completion = self.completions.back();
      self.completions.pop_back();
      MemoryWorld::State::account_completion(self, completion);
      lock.unlock();
      completion.done(completion.context, completion.status);
    }
  }

  // A posted receive, or in rendezvous mode a send no receive took yet, is
  // removed and completes with Errc::cancelled at this rank's next
  // progress(). Anything else completes as it would have (an eager send's
  // bytes were copied when it was posted).
  void cancel(int peer, Tag tag, void* context, CancelMode mode) override {
    world_.check_peer(peer, "cancel");
    std::lock_guard lock(world_.mutex);
    RankState& self = world_.ranks[rank_];
    const Status cancelled{false, Errc::cancelled, 0};
    if (mode == CancelMode::fail_peer) {
      // Giving up on the connection ends the one-sided operations held for
      // the peer: never performed, completed as failed.
      for (auto h = self.held.begin(); h != self.held.end();) {
        if (h->peer != peer) {
          ++h;
          continue;
        }
        h->completion.status = Status{false, Errc::peer_failed, 0};
        self.completions.push_back(h->completion);
        h = self.held.erase(h);
      }
      self.wakeup.notify_all();
    }
    if (auto it = self.posted.find({peer, tag}); it != self.posted.end()) {
      auto& queue = it->second;
      for (auto r = queue.begin(); r != queue.end(); ++r) {
        if (r->context != context) continue;
        self.completions.push_back(Completion{r->done, r->context, cancelled, false});
        queue.erase(r);
        if (queue.empty()) self.posted.erase(it);
        self.wakeup.notify_all();
        return;
      }
    }
    RankState& target = world_.ranks[peer];
    auto take_send = [&](std::deque<Message>& queue) {
      for (auto m = queue.begin(); m != queue.end(); ++m) {
        if (m->source != rank_ || m->tag != tag || m->send_done == nullptr ||
            m->send_context != context)
          continue;
        self.completions.push_back(Completion{m->send_done, m->send_context, cancelled, true});
        queue.erase(m);
        self.wakeup.notify_all();
        return true;
      }
      return false;
    };
    if (take_send(target.in_transit)) return;
    if (auto it = target.unexpected.find({rank_, tag}); it != target.unexpected.end()) {
      if (take_send(it->second) && it->second.empty()) target.unexpected.erase(it);
    }
  }

  std::optional<Probe> probe(int peer, Tag tag, Tag mask) override {
    std::lock_guard lock(world_.mutex);
    for (const auto& [key, queue] : world_.ranks[rank_].unexpected) {
      const Message& m = queue.front();
      if ((peer < 0 || m.source == peer) && ((m.tag ^ tag) & mask) == 0)
        return Probe{m.source, m.tag, m.length};
    }
    return std::nullopt;
  }

  void set_am_handler(uint16_t id, AmHandler handler) override {
    std::lock_guard lock(world_.mutex);
    RankState& self = world_.ranks[rank_];
    if (handler)
      self.handlers[id] = std::move(handler);
    else
      self.handlers.erase(id);
    self.wakeup.notify_all();
  }

  void am_send(int peer, uint16_t id, std::span<const std::byte> payload) override {
    world_.check_peer(peer, "am_send");
    std::lock_guard lock(world_.mutex);
    world_.ranks[rank_].stats.ams_sent++;
    RankState& target = world_.ranks[peer];
    if (target.departed) return;
    target.ams.push_back(ActiveMessage{rank_, id, {payload.begin(), payload.end()}});
    target.wakeup.notify_all();
  }

  bool supports_rma() const override { return true; }

  std::unique_ptr<RmaRegion> rma_allocate(size_t bytes) override {
    return std::make_unique<MemoryRegion>(rank_, bytes);
  }

  std::unique_ptr<RmaTarget> rma_attach(int peer, std::span<const std::byte> key) override {
    world_.check_peer(peer, "rma_attach");
    uint64_t fields[3];
    if (key.size() != sizeof(fields)) {
      throw Error(Errc::protocol, fmt::format("MemoryWorld rma_attach: rank {}'s key has {} bytes",
                                              peer, key.size()));
    }
    std::memcpy(fields, key.data(), sizeof(fields));
    if (fields[0] != static_cast<uint64_t>(peer)) {
      throw Error(Errc::protocol, fmt::format("MemoryWorld rma_attach: the key of rank {} names "
                                              "rank {}",
                                              peer, fields[0]));
    }
    return std::make_unique<MemoryTarget>(peer, reinterpret_cast<std::byte*>(fields[1]), fields[2],
                                          world_.options.rma_mapped);
  }

  void rma_put(RmaTarget& target, size_t offset, const void* data, size_t length, CompletionFn done,
               void* context) override {
    auto& t = checked(target, offset, length, "rma_put");
    one_sided(t.peer(), done, context, length,
              [dst = t.memory() + offset, data, length] { std::memcpy(dst, data, length); });
  }

  void rma_get(RmaTarget& target, size_t offset, void* data, size_t length, CompletionFn done,
               void* context) override {
    auto& t = checked(target, offset, length, "rma_get");
    one_sided(t.peer(), done, context, length,
              [src = t.memory() + offset, data, length] { std::memcpy(data, src, length); });
  }

  void rma_atomic(RmaTarget& target, size_t offset, const RmaAtomic& atomic, CompletionFn done,
                  void* context) override {
    auto& t = checked(target, offset, atomic.width, "rma_atomic");
    if (!rma_atomic_offered(atomic) || offset % atomic.width != 0) {
      throw Error(
          Errc::invalid_argument,
          fmt::format("MemoryWorld rma_atomic: width {} at offset {}", atomic.width, offset));
    }
    one_sided(t.peer(), done, context, atomic.width, [word = t.memory() + offset, atomic] {
      const uint64_t old = apply_rma_atomic(word, atomic);
      if (atomic.fetch != nullptr) *atomic.fetch = old;
    });
  }

  void rma_flush(int peer, CompletionFn done, void* context) override {
    if (peer >= 0) world_.check_peer(peer, "rma_flush");
    one_sided(peer, done, context, 0, [] {});
  }

  // Operations act at the call, so they are performed in issue order.
  void rma_fence() override {}

  bool progress() override { return world_.progress(rank_); }

  void block(int extra_fd, std::chrono::microseconds max) override {
    if (extra_fd >= 0) {
      pollfd pfd{extra_fd, POLLIN, 0};
      if (::poll(&pfd, 1, 0) > 0) return;
      // The fd cannot be waited on together with the condition variable:
      // sleep in short slices so a readable fd is noticed soon.
      max = std::min(max, std::chrono::microseconds(1000));
    }
    std::unique_lock lock(world_.mutex);
    world_.ranks[rank_].wakeup.wait_for(lock, max, [&] { return world_.has_work(rank_); });
  }

  double now() const override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

 private:
  MemoryTarget& checked(RmaTarget& target, size_t offset, size_t length, const char* what) {
    auto* t = dynamic_cast<MemoryTarget*>(&target);
    if (t == nullptr)
      throw Error(Errc::internal, fmt::format("MemoryWorld {}: foreign target", what));
    if (offset > t->size() || length > t->size() - offset) {
      throw Error(Errc::invalid_argument,
                  fmt::format("MemoryWorld {}: bytes [{}, {}) outside rank {}'s {} B", what, offset,
                              offset + length, t->peer(), t->size()));
    }
    return *t;
  }

  // Acts on the target's memory now (unless it departed) and queues the
  // completion for this rank's next progress(); a held target keeps both
  // for later (MemoryWorld::hold_rma).
  void one_sided(int peer, CompletionFn done, void* context, size_t length,
                 std::function<void()> act) {
    std::lock_guard lock(world_.mutex);
    RankState& self = world_.ranks[rank_];
    Completion completion{done, context, Status{true, Errc::internal, length}, false, true};
    if (peer >= 0 && world_.ranks[peer].rma_held && !world_.ranks[peer].departed) {
      if (length > 0) ++self.stats.rma_ops;
      self.held.push_back(HeldRma{peer, std::move(act), completion});
      return;
    }
    if (peer >= 0 && world_.ranks[peer].departed) {
      completion.status = Status{false, Errc::peer_failed, 0};
    } else {
      if (length > 0) ++self.stats.rma_ops;
      act();
    }
    self.completions.push_back(completion);
    self.wakeup.notify_all();
  }

  MemoryWorld::State& world_;
  int rank_;
};

}  // namespace

bool MemoryWorld::State::progress(int rank) {
  std::unique_lock lock(mutex);
  RankState& self = ranks[rank];
  if (self.departed) return false;
  bool active = false;

  for (Message& message : take_arrivals(self)) {
    active = true;
    const StreamKey key{message.source, message.tag};
    if (std::optional<PostedRecv> recv = take_front(self.posted, key)) {
      match(rank, *recv, message);
    } else {
      self.unexpected[key].push_back(std::move(message));
    }
  }

  // A receive from a departed peer fails once nothing that peer already sent
  // can satisfy it. Checked on every progress once anyone departed: a
  // receive may be posted after the departure.
  self.departures_seen = departures;
  if (departures > 0) {
    for (auto it = self.posted.begin(); it != self.posted.end();) {
      const auto [source, tag] = it->first;
      const bool pending =
          std::any_of(self.in_transit.begin(), self.in_transit.end(),
                      [&](const Message& m) { return m.source == source && m.tag == tag; });
      if (!ranks[source].departed || pending) {
        ++it;
        continue;
      }
      for (const PostedRecv& r : it->second) {
        self.completions.push_back(
            Completion{r.done, r.context, Status{false, Errc::peer_failed, 0}, false});
      }
      it = self.posted.erase(it);
    }
  }

  // Active messages in order per source; a source whose head AM has no
  // handler yet blocks that source's later AMs.
  std::vector<std::pair<AmHandler, ActiveMessage>> handled;
  std::vector<int> blocked_sources;
  for (auto it = self.ams.begin(); it != self.ams.end();) {
    const bool blocked = std::find(blocked_sources.begin(), blocked_sources.end(), it->source) !=
                         blocked_sources.end();
    auto handler = self.handlers.find(it->id);
    if (blocked || handler == self.handlers.end()) {
      if (!blocked) blocked_sources.push_back(it->source);
      ++it;
      continue;
    }
    handled.emplace_back(handler->second, std::move(*it));
    it = self.ams.erase(it);
  }

  std::deque<Completion> completions;
  completions.swap(self.completions);
  for (const Completion& c : completions)
    account_completion(self, c);
  lock.unlock();

  for (const Completion& c : completions)
    c.done(c.context, c.status);
  for (auto& [handler, am] : handled)
    handler(am.source, am.payload);
  return active || !completions.empty() || !handled.empty();
}

MemoryWorld::MemoryWorld(int size) : MemoryWorld(size, Options{}) {}

MemoryWorld::MemoryWorld(int size, Options options) : state_(std::make_unique<State>()) {
  if (size < 1) {
    throw Error(Errc::invalid_argument, fmt::format("MemoryWorld: size {} is below 1", size));
  }
  state_->size = size;
  state_->options = options;
  state_->rng.seed(options.seed);
  state_->ranks = std::vector<RankState>(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r)
    state_->ranks[r].transport = std::make_unique<MemoryTransport>(*state_, r);
}

MemoryWorld::~MemoryWorld() = default;

int MemoryWorld::size() const {
  return state_->size;
}

Transport& MemoryWorld::transport(int rank) {
  state_->check_peer(rank, "transport");
  return *state_->ranks[rank].transport;
}

bool MemoryWorld::progress_all() {
  std::vector<int> order(static_cast<size_t>(state_->size));
  for (int r = 0; r < state_->size; ++r)
    order[r] = r;
  if (state_->options.seed != 0) {
    std::lock_guard lock(state_->mutex);
    std::shuffle(order.begin(), order.end(), state_->rng);
  }
  bool active = false;
  for (int r : order)
    active = state_->progress(r) || active;
  return active;
}

size_t MemoryWorld::run_until(const std::function<bool()>& pred, size_t max_rounds,
                              std::string_view what) {
  for (size_t round = 0;; ++round) {
    if (pred()) return round;
    if (round == max_rounds) {
      throw Error(Errc::timeout, fmt::format("{}: condition not reached after {} rounds\n{}", what,
                                             max_rounds, describe()));
    }
    const bool active = progress_all();
    if (!active && quiescent() && !pred()) {
      throw Error(Errc::timeout, fmt::format("{}: stalled after {} rounds (nothing in flight)\n{}",
                                             what, round + 1, describe()));
    }
  }
}

void MemoryWorld::hold_rma(int target) {
  state_->check_peer(target, "hold_rma");
  std::lock_guard lock(state_->mutex);
  state_->ranks[target].rma_held = true;
}

void MemoryWorld::release_rma(int target) {
  state_->check_peer(target, "release_rma");
  std::lock_guard lock(state_->mutex);
  state_->ranks[target].rma_held = false;
  for (RankState& rs : state_->ranks) {
    for (auto h = rs.held.begin(); h != rs.held.end();) {
      if (h->peer != target) {
        ++h;
        continue;
      }
      h->act();
      rs.completions.push_back(h->completion);
      h = rs.held.erase(h);
    }
    rs.wakeup.notify_all();
  }
}

void MemoryWorld::depart(int rank) {
  state_->check_peer(rank, "depart");
  std::lock_guard lock(state_->mutex);
  state_->ranks[rank].departed = true;
  state_->departures++;
  for (RankState& rs : state_->ranks)
    rs.wakeup.notify_all();
}

MemoryWorld::Stats MemoryWorld::stats(int rank) const {
  state_->check_peer(rank, "stats");
  std::lock_guard lock(state_->mutex);
  return state_->ranks[rank].stats;
}

void MemoryWorld::reset_stats() {
  std::lock_guard lock(state_->mutex);
  for (RankState& rs : state_->ranks) {
    Stats fresh;
    fresh.sends_in_flight = rs.stats.sends_in_flight;
    fresh.recvs_in_flight = rs.stats.recvs_in_flight;
    fresh.max_sends_in_flight = fresh.sends_in_flight;
    fresh.max_recvs_in_flight = fresh.recvs_in_flight;
    rs.stats = fresh;
  }
}

bool MemoryWorld::quiescent() const {
  std::lock_guard lock(state_->mutex);
  for (int r = 0; r < state_->size; ++r) {
    const RankState& rs = state_->ranks[r];
    if (rs.departed) continue;
    if (state_->has_work(r)) return false;
  }
  return true;
}

std::string MemoryWorld::describe() const {
  std::lock_guard lock(state_->mutex);
  std::string out;
  for (int r = 0; r < state_->size; ++r) {
    const RankState& rs = state_->ranks[r];
    if (rs.posted.empty() && rs.unexpected.empty() && rs.in_transit.empty() && rs.ams.empty() &&
        !rs.departed)
      continue;
    out += fmt::format("rank {}{}:", r, rs.departed ? " (departed)" : "");
    for (const auto& [key, queue] : rs.posted)
      for (const PostedRecv& p : queue)
        out += fmt::format(" [recv from {} {} cap {}]", p.source, describe_tag(p.tag), p.capacity);
    for (const auto& [key, queue] : rs.unexpected)
      for (const Message& m : queue)
        out +=
            fmt::format(" [unmatched from {} {} len {}]", m.source, describe_tag(m.tag), m.length);
    if (!rs.in_transit.empty()) out += fmt::format(" [{} in transit]", rs.in_transit.size());
    if (!rs.ams.empty()) out += fmt::format(" [{} AMs queued]", rs.ams.size());
    out += "\n";
  }
  return out;
}

}  // namespace grove
