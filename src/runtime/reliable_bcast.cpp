#include "runtime/reliable_bcast.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "grove/error.hpp"

namespace grove::runtime {

ReliableBcast::ReliableBcast(ReliableHost& host, double forward_delay, uint64_t segment)
    : host_(host), forward_delay_(forward_delay), segment_(segment) {}

bool ReliableBcast::retired(const OpId& id) const {
  auto it = retired_below_.find({id.topology, id.signature});
  return it != retired_below_.end() && id.generation < it->second;
}

void ReliableBcast::hold_whole(const OpId& id, Op& op) {
  op.payload = op.assembly.take();
  op.held_latest = host_.now();
  // A held forward waits from now: the delay is measured from the hold.
  if (std::isinf(op.forward_due)) op.forward_due = op.held_latest + forward_delay_;
  // Delivered before any further forward: a relay whose forward is held (or
  // that dies before forwarding) still completes its own fence.
  host_.delivered(id, op.payload, op.started, op.held_latest);
}

void ReliableBcast::originate(const OpId& id, std::shared_ptr<const Blob> payload, double started,
                              PayloadKey key) {
  if (retired(id)) return;
  Op& op = ops_[id];
  if (!op.payload) {
    // Fresh, or a partial payload (of this result, or of an older one whose
    // root departed): the whole payload replaces what was here, and the
    // root of the operation holds nothing back.
    op.key = key;
    op.started = started;
    op.assembly = SegmentAssembly(payload->size());
    op.assembly.add(0, std::move(payload));
    if (std::isinf(op.forward_due)) op.forward_due = -1;
    hold_whole(id, op);
  }
  restart(id, op);
}

void ReliableBcast::on_payload(const OpId& id, int from, uint64_t sender_version,
                               ReleaseSegment segment, double started) {
  const uint64_t length = segment.bytes->size();
  const bool last = segment.offset + length == segment.total;
  if (retired(id)) {
    // Every sender ends with the payload's last segment: one answer each.
    if (last) {
      ++stats_.retired_acks;
      send_ack(id, from, true, 0);
    }
    return;
  }
  auto [it, fresh] = ops_.try_emplace(id);
  Op& op = it->second;
  bool renewed = fresh;
  if (fresh) {
    op.key = segment.key;
    op.started = started;
    op.assembly = SegmentAssembly(segment.total);
  } else if (segment.key != op.key) {
    if (op.payload || segment.key < op.key) {
      ++stats_.dropped_segments;  // an older result, or not the one held whole here
      return;
    }
    // A newer result: the older one's root departed before any survivor
    // held all of it, and a new root built this one. Its bytes replace the
    // partial ones; forwards of the older bytes are superseded downstream
    // the same way.
    ++stats_.superseded;
    op.key = segment.key;
    op.started = started;
    op.assembly = SegmentAssembly(segment.total);
    op.acked.clear();
    renewed = true;
  }
  if (segment.total != op.assembly.total()) {
    throw Error(Errc::protocol,
                fmt::format("rank {}: fence release g{}: rank {} sent a segment of a {}-byte "
                            "payload of result ({}, {}), which earlier segments gave {} bytes",
                            host_.self(), id.generation, from, segment.total, segment.key.origin,
                            segment.key.version, op.assembly.total()));
  }
  op.askers.insert(from);
  const bool added = op.assembly.add(segment.offset, segment.bytes) || renewed;
  if (!added) {
    // Idempotent at the receiver: a duplicate is "not involved", and its
    // sender is answered like every other asker (once, on its last segment).
    ++stats_.duplicates;
    if (op.complete && last) send_ack(id, from, false, op.held_latest);
    return;
  }
  ++stats_.segments_received;
  if (!op.payload && op.assembly.whole()) hold_whole(id, op);
  if (fresh) {
    if (sender_version > host_.tree_version() &&
        from != host_.tree(tag::Topology::routing).parent(host_.self())) {
      // Lesson 5: the sender computed this forward under a view we have not
      // reached, and it is not our parent: the two views really disagree.
      // Derive nothing (our tree may call us a leaf) until our own notice
      // arrives; later segments are kept, not forwarded.
      op.parked = true;
      op.park_until = sender_version;
      ++stats_.parked;
      return;
    }
    const topo::LiveTree& tree = host_.tree(id.topology);
    if (forward_delay_ > 0 && tree.parent(host_.self()) >= 0 &&
        !tree.children(host_.self()).empty()) {
      op.forward_due =
          op.payload ? host_.now() + forward_delay_ : std::numeric_limits<double>::infinity();
    }
    restart(id, op);
    return;
  }
  // Pipelined: a running relay passes each new segment on at once, to the
  // children of its last (re)start; a restart sends them everything held.
  if (op.running && !op.parked && op.forward_due < 0 && !op.expected.empty()) {
    send_segment(id, op, op.expected, segment.bytes, 0, length, segment.offset);
    stats_.forwards += op.expected.size();
  }
  check_complete(id, op);
}

void ReliableBcast::restart(const OpId& id, Op& op) {
  if (op.parked) {
    if (host_.tree_version() < op.park_until) return;
    op.parked = false;
  }
  op.expected = host_.tree(id.topology).children(host_.self());
  op.acked.clear();
  op.restart_version = host_.tree_version();
  const bool replay = op.running;
  op.running = true;
  op.complete = false;
  if (op.forward_due < 0) {
    const size_t segments = send_held(id, op, op.expected);
    (replay ? stats_.replays : stats_.forwards) += segments * op.expected.size();
  }
  check_complete(id, op);
}

size_t ReliableBcast::send_held(const OpId& id, const Op& op, const std::vector<int>& peers) {
  if (peers.empty()) return 0;
  size_t sent = 0;
  if (op.payload) {
    // Segment by segment, each to every peer in turn: every child gets the
    // first segment early and can pass it on while the rest follow.
    for (const auto& [offset, length] : cut_segments(op.payload->size(), segment_)) {
      send_segment(id, op, peers, op.payload, static_cast<size_t>(offset),
                   static_cast<size_t>(length), offset);
      ++sent;
    }
  } else {
    op.assembly.for_each([&](uint64_t offset, const std::shared_ptr<const Blob>& piece) {
      send_segment(id, op, peers, piece, 0, piece->size(), offset);
      ++sent;
    });
  }
  return sent;
}

void ReliableBcast::send_segment(const OpId& id, const Op& op, const std::vector<int>& peers,
                                 std::shared_ptr<const Blob> owner, size_t at, size_t length,
                                 uint64_t offset) {
  FenceMessage m;
  m.header.kind = FenceKind::release;
  m.header.topology = id.topology;
  m.header.context = id.signature;
  m.header.generation = id.generation;
  m.payload = std::move(owner);
  m.payload_at = at;
  m.payload_length = length;
  m.key = op.key;
  m.total = op.payload ? op.payload->size() : op.assembly.total();
  m.offset = offset;
  m.release_started = op.started;
  host_.send(peers, std::move(m));
}

void ReliableBcast::send_ack(const OpId& id, int peer, bool retired, double held_latest) {
  if (peer < 0) return;
  FenceMessage m;
  m.header.kind = FenceKind::ack;
  m.header.topology = id.topology;
  m.header.context = id.signature;
  m.header.generation = id.generation;
  m.retired = retired;
  m.held_latest = held_latest;
  host_.send({peer}, std::move(m));
  ++stats_.acks_sent;
}

void ReliableBcast::check_complete(const OpId& id, Op& op) {
  // Acks roll up only from a rank that holds the WHOLE payload.
  if (op.complete || !op.payload || !op.running || op.parked || op.forward_due >= 0) return;
  for (int child : op.expected)
    if (op.acked.count(child) == 0) return;
  op.complete = true;
  // Lesson 3: every rank that asked gets the answer, whichever of them this
  // rank now calls its parent.
  for (int asker : op.askers)
    send_ack(id, asker, false, op.held_latest);
  host_.completed(id, op.held_latest);
}

void ReliableBcast::on_ack(const OpId& id, int from, uint64_t sender_version, bool retired,
                           double held_latest) {
  auto it = ops_.find(id);
  if (it == ops_.end()) {
    ++stats_.stray_acks;
    return;
  }
  Op& op = it->second;
  const bool child = std::find(op.expected.begin(), op.expected.end(), from) != op.expected.end();
  if (!op.running || !child || (!retired && sender_version < op.restart_version)) {
    ++stats_.stale_acks;
    return;
  }
  op.acked.insert(from);
  op.held_latest = std::max(op.held_latest, held_latest);
  check_complete(id, op);
}

void ReliableBcast::on_view_change() {
  for (auto& [id, op] : ops_)
    restart(id, op);
}

void ReliableBcast::poll() {
  const double now = host_.now();
  for (auto& [id, op] : ops_) {
    if (op.forward_due < 0 || now < op.forward_due) continue;
    op.forward_due = -1;
    // The children are read now, not when the payload arrived: a repair
    // during the hold changed them.
    op.expected = host_.tree(id.topology).children(host_.self());
    op.acked.clear();
    op.restart_version = host_.tree_version();
    stats_.forwards += send_held(id, op, op.expected) * op.expected.size();
    check_complete(id, op);
  }
}

double ReliableBcast::next_timer() const {
  double next = std::numeric_limits<double>::infinity();
  for (const auto& [id, op] : ops_)
    if (op.forward_due >= 0) next = std::min(next, op.forward_due);
  return next;
}

void ReliableBcast::retire_below(tag::Topology topology, uint32_t signature, uint64_t generation) {
  uint64_t& below = retired_below_[{topology, signature}];
  below = std::max(below, generation);
  for (auto it = ops_.begin(); it != ops_.end();) {
    const OpId& id = it->first;
    if (id.topology == topology && id.signature == signature && id.generation < below)
      it = ops_.erase(it);
    else
      ++it;
  }
}

bool ReliableBcast::holds(const OpId& id) const {
  auto it = ops_.find(id);
  return it != ops_.end() && it->second.payload != nullptr;
}

bool ReliableBcast::complete(const OpId& id) const {
  auto it = ops_.find(id);
  return it != ops_.end() && it->second.complete;
}

bool ReliableBcast::parked(const OpId& id) const {
  auto it = ops_.find(id);
  return it != ops_.end() && it->second.parked;
}

bool ReliableBcast::quiescent() const {
  return std::all_of(ops_.begin(), ops_.end(), [](const auto& e) { return e.second.complete; });
}

double ReliableBcast::held_latest(const OpId& id) const {
  auto it = ops_.find(id);
  return it == ops_.end() ? 0 : it->second.held_latest;
}

std::string ReliableBcast::describe() const {
  std::string out;
  for (const auto& [id, op] : ops_) {
    if (op.complete) continue;
    std::vector<int> missing;
    for (int child : op.expected)
      if (op.acked.count(child) == 0) missing.push_back(child);
    const std::string bytes =
        op.payload ? ""
                   : fmt::format("holds {} of {} bytes, ", op.assembly.have(), op.assembly.total());
    out += fmt::format("release g{} ({}): {}{}{}awaiting acks from [{}]; ", id.generation,
                       tag::Topology::release == id.topology ? "release tree" : "routing tree",
                       bytes, op.parked ? "parked, " : "",
                       op.forward_due >= 0 ? "forward held, " : "", fmt::join(missing, ","));
  }
  return out;
}

}  // namespace grove::runtime
