#include "runtime/reliable_bcast.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace grove::runtime {

ReliableBcast::ReliableBcast(ReliableHost& host, double forward_delay)
    : host_(host), forward_delay_(forward_delay) {}

bool ReliableBcast::retired(const OpId& id) const {
  auto it = retired_below_.find({id.topology, id.signature});
  return it != retired_below_.end() && id.generation < it->second;
}

void ReliableBcast::hold(const OpId& id, Op& op, int from, std::shared_ptr<const Blob> payload,
                         double started) {
  op.payload = std::move(payload);
  op.started = started;
  op.held_latest = host_.now();
  if (from >= 0) op.askers.insert(from);
  // Delivered before any forward: a relay whose forward is held (or that
  // dies before forwarding) still completes its own fence.
  host_.delivered(id, op.payload, started, op.held_latest);
}

void ReliableBcast::originate(const OpId& id, std::shared_ptr<const Blob> payload, double started) {
  if (retired(id)) return;
  auto [it, fresh] = ops_.try_emplace(id);
  if (fresh) hold(id, it->second, -1, std::move(payload), started);
  restart(id, it->second);
}

void ReliableBcast::on_payload(const OpId& id, int from, uint64_t sender_version,
                               std::shared_ptr<const Blob> payload, double started) {
  if (retired(id)) {
    ++stats_.retired_acks;
    send_ack(id, from, true, 0);
    return;
  }
  auto [it, fresh] = ops_.try_emplace(id);
  Op& op = it->second;
  if (!fresh) {
    // Idempotent at the receiver: a duplicate is "not involved", and its
    // sender is answered like every other asker.
    ++stats_.duplicates;
    op.askers.insert(from);
    if (op.complete) send_ack(id, from, false, op.held_latest);
    return;
  }
  hold(id, op, from, std::move(payload), started);
  if (sender_version > host_.tree_version() &&
      from != host_.tree(tag::Topology::routing).parent(host_.self())) {
    // Lesson 5: the sender computed this forward under a view we have not
    // reached, and it is not our parent: the two views really disagree. Derive
    // nothing (our tree may call us a leaf) until our own notice arrives.
    op.parked = true;
    op.park_until = sender_version;
    ++stats_.parked;
    return;
  }
  const topo::LiveTree& tree = host_.tree(id.topology);
  if (forward_delay_ > 0 && tree.parent(host_.self()) >= 0 && !tree.children(host_.self()).empty())
    op.forward_due = host_.now() + forward_delay_;
  restart(id, op);
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
    send_payload(id, op, op.expected);
    (replay ? stats_.replays : stats_.forwards) += op.expected.size();
  }
  check_complete(id, op);
}

void ReliableBcast::send_payload(const OpId& id, const Op& op, const std::vector<int>& peers) {
  if (peers.empty()) return;
  FenceMessage m;
  m.header.kind = FenceKind::release;
  m.header.topology = id.topology;
  m.header.context = id.signature;
  m.header.generation = id.generation;
  m.payload = op.payload;
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
  if (op.complete || !op.running || op.parked || op.forward_due >= 0) return;
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
    send_payload(id, op, op.expected);
    stats_.forwards += op.expected.size();
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
    out += fmt::format("release g{} ({}): {}{}awaiting acks from [{}]; ", id.generation,
                       tag::Topology::release == id.topology ? "release tree" : "routing tree",
                       op.parked ? "parked, " : "", op.forward_due >= 0 ? "forward held, " : "",
                       fmt::join(missing, ","));
  }
  return out;
}

}  // namespace grove::runtime
