// The Transport calls of the simulator: posting sends, receives (matched
// against arrived messages), cancel, probe and active messages.

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "grove/error.hpp"
#include "transport/sim/sim_world_impl.hpp"

namespace grove::sim {

uint32_t SimWorld::Impl::new_message() {
  if (!free_messages.empty()) {
    // Its fields are all set by the caller and the stages (next, wire)
    // before they are read.
    const uint32_t id = free_messages.back();
    free_messages.pop_back();
    return id;
  }
  messages.emplace_back();
  return static_cast<uint32_t>(messages.size() - 1);
}

uint32_t SimWorld::Impl::new_receive(int dst, int src, Tag tag, const PostedRecv& posted) {
  const uint32_t rid = new_receive();
  Receive& r = receives[rid];
  r.dst = dst;
  r.src = src;
  r.tag = tag;
  r.data = posted.data;
  r.capacity = posted.capacity;
  r.done = posted.done;
  r.context = posted.context;
  return rid;
}

uint32_t SimWorld::Impl::new_receive() {
  if (!free_receives.empty()) {
    const uint32_t id = free_receives.back();
    free_receives.pop_back();
    receives[id] = Receive{};
    return id;
  }
  receives.emplace_back();
  return static_cast<uint32_t>(receives.size() - 1);
}

void SimWorld::Impl::bad_peer(int rank, int peer, const char* what) const {
  throw Error(
      Errc::invalid_argument,
      fmt::format("simulator rank {}: {} peer {} is outside [0, {})", rank, what, peer, size));
}

void SimWorld::Impl::post_send(int src, int dst, Tag tag, const void* data, size_t length,
                               CompletionFn done, void* context) {
  check_peer(src, dst, "send to");
  if (departed(src)) return;  // a departed rank does nothing
  const bool copy = config.data == DataMode::real;
  if (copy && length > 0 && data == nullptr) {
    throw Error(Errc::invalid_argument,
                fmt::format("simulator rank {}: send of {} bytes to {} from a null buffer", src,
                            length, dst));
  }
  const uint32_t id = new_message();
  Message& m = messages[id];
  m.src = src;
  m.dst = dst;
  m.tag = tag;
  m.length = length;
  m.posted = now;
  m.done = done;
  m.context = context;
  m.refs = 2;  // the sender's completion and the delivery
  m.am = false;
  m.send_failed = false;
  if (copy) {
    const auto* bytes = static_cast<const std::byte*>(data);
    payload_of(id).assign(bytes, bytes + length);
  }
  stats.messages_sent++;
  stats.bytes_sent += length;
  RankState& rank = rank_state(src);
  if (fast_send && rank.worker0 <= now) {
    // dispatch_send's path when worker 0 is free, each send's software
    // costs copy_ps and the NIC is ready when the software is done.
    const Time done_at = now + copy_ps;
    rank.worker0 = done_at;
    const Time ready = std::max(done_at, rank.last_ready);
    rank.last_ready = ready;
    push(ready, EventKind::egress_ready, id);
    return;
  }
  dispatch_send(id);
}

void SimWorld::Impl::post_am(int src, int dst, uint16_t id, std::span<const std::byte> payload) {
  check_peer(src, dst, "active message to");
  if (departed(src)) return;
  const uint32_t mid = new_message();
  Message& m = messages[mid];
  m.src = src;
  m.dst = dst;
  m.tag = id;
  m.length = payload.size();
  m.posted = now;
  m.done = nullptr;
  m.context = nullptr;
  m.refs = 2;
  m.am = true;
  m.send_failed = false;
  payload_of(mid).assign(payload.begin(), payload.end());  // AMs always carry bytes
  stats.ams_sent++;
  dispatch_send(mid);
}

uint32_t SimWorld::Impl::stream_for(int dst, int src) {
  RankState& rank = rank_state(dst);
  if (rank.cached_src == src) return rank.cached_stream;
  const uint32_t sid = streams.find_or_add(Key{dst, src});
  const uint32_t previous = rank.cached_stream;
  const int previous_src = rank.cached_src;
  const bool previous_busy = rank.cached_busy;
  rank.cached_src = src;
  rank.cached_stream = sid;
  rank.cached_busy = false;
  // A busy stream stays without being read; another is removed if empty.
  if (previous != kNone && !previous_busy && streams.at(previous).empty())
    streams.remove(previous, Key{dst, previous_src});
  return sid;
}

uint32_t SimWorld::Impl::take_arrived(Stream& stream, Tag tag) {
  uint32_t before = kNone;
  uint32_t mid = stream.arrived_head;
  while (mid != kNone && messages[mid].tag != tag) {
    before = mid;
    mid = messages[mid].next;
  }
  if (mid == kNone) return kNone;
  const uint32_t after = messages[mid].next;
  if (before == kNone)
    stream.arrived_head = after;
  else
    messages[before].next = after;
  if (stream.arrived_tail == mid) stream.arrived_tail = before;
  return mid;
}

void SimWorld::Impl::post_recv(int dst, int src, Tag tag, void* data, size_t capacity,
                               CompletionFn done, void* context) {
  check_peer(dst, src, "recv from");
  if (departed(dst)) return;
  if (config.data == DataMode::real && capacity > 0 && data == nullptr) {
    throw Error(Errc::invalid_argument,
                fmt::format("simulator rank {}: recv of {} bytes from {} into a null buffer", dst,
                            capacity, src));
  }
  const PostedRecv posted_recv{static_cast<std::byte*>(data), capacity, done, context, tag};
  uint32_t sid = stream_of(dst, src);
  if (sid != kNone && streams.at(sid).arrived_head != kNone) {
    const uint32_t mid = take_arrived(streams.at(sid), tag);
    if (mid != kNone) {
      drop_if_unused(sid, dst, src);
      // Completes from the event loop, not inside recv().
      match(dst, posted_recv, mid, false);
      return;
    }
  }
  if (departed(src)) {
    const uint32_t rid = new_receive(dst, src, tag, posted_recv);
    receives[rid].status = Status{false, Errc::peer_failed, 0};
    push(now, EventKind::recv_complete, rid);
    return;
  }
  if (sid == kNone) sid = stream_for(dst, src);
  streams.at(sid).posted.push(posted_recv);
  mark_used(sid, dst);
}

void SimWorld::Impl::cancel_recv(int dst, int src, Tag tag, void* context) {
  check_peer(dst, src, "cancel of a receive from");
  const uint32_t sid = stream_of(dst, src);
  if (sid == kNone) return;  // matched (its completion is on its way) or never posted
  PostedRecv cancelled;
  if (!streams.at(sid).posted.remove(tag, context, cancelled)) return;
  drop_if_unused(sid, dst, src);
  const uint32_t rid = new_receive(dst, src, tag, cancelled);
  receives[rid].status = Status{false, Errc::cancelled, 0};
  push(now, EventKind::recv_complete, rid);
}

void SimWorld::Impl::set_handler(int rank, uint16_t id, AmHandler handler) {
  const uint64_t key = static_cast<uint64_t>(rank) << 16 | id;
  if (!handler) {
    handlers.erase(key);
    return;
  }
  handlers[key] = std::move(handler);
  auto held = held_ams.find(key);
  if (held == held_ams.end()) return;
  const std::deque<uint32_t> queue = std::move(held->second);
  held_ams.erase(held);
  for (uint32_t mid : queue)
    push(receive_time(rank, messages[mid].length), EventKind::am_handle, mid);
}

std::optional<Transport::Probe> SimWorld::Impl::probe(int rank, int peer, Tag tag, Tag mask) const {
  std::optional<Transport::Probe> best;
  uint64_t best_order = UINT64_MAX;
  for (const uint32_t sid : streams.live()) {
    const Key& key = streams.key(sid);
    if (key.dst != rank || (peer >= 0 && key.src != peer)) continue;
    // The stream's earliest message that fits: its messages are in arrival order.
    for (uint32_t mid = streams.at(sid).arrived_head; mid != kNone; mid = messages[mid].next) {
      const Message& m = messages[mid];
      if (((m.tag ^ tag) & mask) != 0) continue;
      if (orders[mid] < best_order) {
        best_order = orders[mid];
        best = Transport::Probe{key.src, m.tag, m.length};
      }
      break;
    }
  }
  return best;
}

// ------------------------------------------------------------ SimTransport

int SimTransport::size() const {
  return world_->size();
}
bool SimTransport::carries_payload() const {
  return world_->config().data == DataMode::real;
}
void SimTransport::send(int peer, Tag tag, const void* data, size_t length, CompletionFn done,
                        void* context) {
  world_->impl_->post_send(rank_, peer, tag, data, length, done, context);
}
void SimTransport::recv(int peer, Tag tag, void* data, size_t capacity, CompletionFn done,
                        void* context) {
  world_->impl_->post_recv(rank_, peer, tag, data, capacity, done, context);
}
void SimTransport::cancel(int peer, Tag tag, void* context, CancelMode /*mode*/) {
  world_->impl_->cancel_recv(rank_, peer, tag, context);
}
std::optional<Transport::Probe> SimTransport::probe(int peer, Tag tag, Tag mask) {
  return world_->impl_->probe(rank_, peer, tag, mask);
}
void SimTransport::set_am_handler(uint16_t id, AmHandler handler) {
  world_->impl_->set_handler(rank_, id, std::move(handler));
}
void SimTransport::am_send(int peer, uint16_t id, std::span<const std::byte> payload) {
  world_->impl_->post_am(rank_, peer, id, payload);
}
bool SimTransport::progress() {
  return world_->step();
}
void SimTransport::block(int /*extra_fd*/, std::chrono::microseconds max) {
  if (world_->idle())
    world_->advance(max.count() * kPicosPerMicro);
  else
    world_->step();
}
double SimTransport::now() const {
  return to_seconds(world_->now());
}

}  // namespace grove::sim
