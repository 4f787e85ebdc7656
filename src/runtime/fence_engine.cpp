#include "runtime/fence_engine.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace grove::runtime {

std::string FenceConfig::describe() const {
  return fmt::format("rollup_radix={} release_radix={} low_radix_release={}", routing_radix,
                     release_radix, low_radix_release ? "on" : "off");
}

FenceEngine::FenceEngine(Transport& transport, uint32_t context, FenceConfig config,
                         FenceHandover handover)
    : transport_(transport),
      context_(context),
      config_(config),
      self_(transport.rank()),
      size_(transport.size()),
      bcast_(*this, config.release_delay, config.release_segment),
      retired_below_(handover.next_generation),
      first_generation_(handover.next_generation),
      next_generation_(handover.next_generation) {
  if (config_.routing_radix < 2 || config_.release_radix < 2) {
    throw Error(
        Errc::invalid_parameter,
        fmt::format("rank {}: fence: radices must be at least 2 ({})", self_, config_.describe()));
  }
  warn_if_release_is_routing(config_, self_);
  view_ = handover.view;
  for (const FailureNotice& notice : handover.early_notices)
    early_notices_[notice.version] = notice;
  for (tag::Topology path : {tag::Topology::routing, tag::Topology::release}) {
    transport_.set_am_handler(fence_am_id(path, context_),
                              [this, path](int source, std::span<const std::byte> bytes) {
                                on_message(path, source, bytes);
                              });
  }
  for (const FutureMessage& f : handover.future)
    on_message(f.path, f.source, f.bytes);
}

FenceEngine::~FenceEngine() {
  if (handed_over_) return;
  for (tag::Topology path : {tag::Topology::routing, tag::Topology::release})
    transport_.set_am_handler(fence_am_id(path, context_), {});
}

const topo::LiveTree& FenceEngine::tree(tag::Topology topology) {
  // A rank never derives itself out of its own tree: if a view lists it as
  // departed, it is still counted (it can only be wrong about itself).
  auto build = [&](int radix) {
    std::set<int> departed = view_.departed;
    departed.erase(self_);
    return topo::LiveTree(size_, config_.root, departed, radix);
  };
  if (topology == tag::Topology::release) {
    if (!release_tree_) release_tree_.emplace(build(config_.release_radix));
    return *release_tree_;
  }
  if (!routing_tree_) routing_tree_.emplace(build(config_.routing_radix));
  return *routing_tree_;
}

void FenceEngine::send(const std::vector<int>& peers, FenceMessage message) {
  FenceHeader& h = message.header;
  h.low_radix_release = config_.low_radix_release;
  h.routing_radix = static_cast<uint32_t>(config_.routing_radix);
  h.release_radix = static_cast<uint32_t>(config_.release_radix);
  h.context = context_;
  h.tree_version = view_.version;
  const Blob bytes = encode_fence_message(message);
  for (int peer : peers) {
    if (peer < 0 || peer == self_) continue;
    ++stats_.sent[static_cast<size_t>(h.kind)];
    stats_.bytes_sent += bytes.size();
    transport_.am_send(peer, fence_am_id(h.topology, context_), bytes);
  }
}

void FenceEngine::record_error(const Error& error) {
  if (!error_) error_ = error;
}

void FenceEngine::check_error() const {
  if (error_) throw *error_;
}

// The topology and the radices are stamped on every message: a peer
// configured differently is a deployment error, reported by name, because
// without this check the two would derive different trees and hang.
bool FenceEngine::config_matches(const FenceHeader& h) const {
  return static_cast<int>(h.routing_radix) == config_.routing_radix &&
         h.low_radix_release == config_.low_radix_release &&
         (!config_.low_radix_release || static_cast<int>(h.release_radix) == config_.release_radix);
}

Error FenceEngine::mismatch_error(const FenceHeader& h, int source) const {
  FenceConfig theirs = config_;
  theirs.routing_radix = static_cast<int>(h.routing_radix);
  theirs.release_radix = static_cast<int>(h.release_radix);
  theirs.low_radix_release = h.low_radix_release;
  return Error(Errc::mismatch,
               fmt::format("rank {}: fence on communicator {}: rank {} runs it with {}, this rank "
                           "with {}; set the same rollup_radix, release_radix and "
                           "low_radix_release on every rank",
                           self_, context_, source, theirs.describe(), config_.describe()));
}

void FenceEngine::check_topology(const FenceHeader& h, tag::Topology path, int source) const {
  const bool release_kind = h.kind == FenceKind::release || h.kind == FenceKind::ack;
  const tag::Topology expected = release_kind ? config_.release_topology() : tag::Topology::routing;
  if (h.topology == path && h.topology == expected) return;
  throw Error(Errc::mismatch,
              fmt::format("rank {}: fence on communicator {}: a {} from rank {} is stamped for "
                          "the {} tree and arrived on the {} tree's path; this rank expects the "
                          "{} tree (low_radix_release={})",
                          self_, context_, fence_kind_name(h.kind), source,
                          topology_name(h.topology), topology_name(path), topology_name(expected),
                          config_.low_radix_release ? "on" : "off"));
}

void FenceEngine::on_message(tag::Topology path, int source, std::span<const std::byte> bytes) {
  try {
    const FenceMessage m = decode_fence_message(bytes, source);
    const FenceHeader& h = m.header;
    if (h.context != context_) {
      throw Error(Errc::protocol,
                  fmt::format("rank {}: fence: rank {} sent context {} on the path of context {}",
                              self_, source, h.context, context_));
    }
    if (h.kind != FenceKind::view) {
      if (h.generation < first_generation_) {
        ++stats_.stale;  // of this communicator's previous fence configuration
        return;
      }
      // A rollup for a fence this rank has not started yet is kept as it
      // came and judged when this rank starts that fence: its parameters
      // (and so its engine) are only known then.
      if (h.kind == FenceKind::rollup && h.generation >= next_generation_) {
        future_.push_back({path, source, Blob(bytes.begin(), bytes.end()), h.generation});
        return;
      }
      if (!config_matches(h)) throw mismatch_error(h, source);
      check_topology(h, path, source);
    }
    if (!view_.alive(source)) {
      // A message of a rank this rank knows has departed (sent before it
      // died, delivered after its notice) is dropped. Taking a release from
      // it now would make this rank a holder after it reported under the
      // view without that rank, and a new root could then build a second,
      // different result for the same generation.
      ++stats_.from_departed;
      return;
    }
    const OpId id{h.topology, context_, h.generation};
    switch (h.kind) {
      case FenceKind::rollup:
        on_rollup(source, m);
        break;
      case FenceKind::release:
        bcast_.on_payload(id, source, h.tree_version, {m.key, m.total, m.offset, m.payload},
                          m.release_started);
        break;
      case FenceKind::ack:
        bcast_.on_ack(id, source, h.tree_version, m.retired, m.held_latest);
        break;
      case FenceKind::view:
        adopt_view(std::set<int>(m.departed.begin(), m.departed.end()), h.tree_version);
        break;
      case FenceKind::release_up:
        on_release_up(m);
        break;
    }
    poll();
  } catch (const Error& error) {
    record_error(error);
  }
}

bool FenceEngine::on_notice(const FailureNotice& notice) {
  if (notice.version <= view_.version) return false;
  early_notices_[notice.version] = notice;
  return apply_early_notices();
}

bool FenceEngine::apply_early_notices() {
  bool changed = false;
  for (auto it = early_notices_.begin(); it != early_notices_.end();) {
    if (it->first <= view_.version) {
      it = early_notices_.erase(it);
      continue;
    }
    if (it->first != view_.version + 1) break;
    std::set<int> departed = view_.departed;
    departed.insert(it->second.rank);
    const uint64_t version = it->first;
    early_notices_.erase(it);
    changed = adopt_view(departed, version) || changed;
    it = early_notices_.begin();
  }
  return changed;
}

bool FenceEngine::adopt_view(const std::set<int>& departed, uint64_t version) {
  if (version <= view_.version) return false;
  for (int rank : departed) {
    if (rank < 0 || rank >= size_) {
      record_error(Error(Errc::protocol, fmt::format("rank {}: fence: view {} lists rank {} of {}",
                                                     self_, version, rank, size_)));
      return false;
    }
  }
  view_.departed.insert(departed.begin(), departed.end());
  view_.version = version;
  routing_tree_.reset();
  release_tree_.reset();
  ++stats_.view_changes;
  view_changed();
  apply_early_notices();
  return true;
}

// A repair. Both topologies react independently: the view spreads down the
// routing tree, every held release restarts on its own topology, and every
// open rollup is offered again to this rank's (possibly new) parent.
void FenceEngine::view_changed() {
  FenceMessage relay;
  relay.header.kind = FenceKind::view;
  relay.header.topology = tag::Topology::routing;
  relay.departed.assign(view_.departed.begin(), view_.departed.end());
  send(tree(tag::Topology::routing).children(self_), std::move(relay));
  bcast_.on_view_change();
  for (auto& [generation, round] : rounds_) {
    if (round.release)
      maybe_release_up(generation);
    else
      try_rollup(generation);
  }
}

uint64_t FenceEngine::start(std::span<const std::byte> mine) {
  const uint64_t generation = next_generation_++;
  deferred_.emplace(generation, Blob(mine.begin(), mine.end()));
  // Messages that arrived stamped differently for this generation are
  // judged now: this rank's configuration for it is known.
  std::vector<FutureMessage> ready;
  for (auto it = future_.begin(); it != future_.end();) {
    if (it->generation < next_generation_) {
      ready.push_back(std::move(*it));
      it = future_.erase(it);
    } else {
      ++it;
    }
  }
  for (const FutureMessage& f : ready)
    on_message(f.path, f.source, f.bytes);
  poll();
  return generation;
}

FenceHandover FenceEngine::hand_over() {
  for (tag::Topology path : {tag::Topology::routing, tag::Topology::release})
    transport_.set_am_handler(fence_am_id(path, context_), {});
  handed_over_ = true;
  FenceHandover out;
  out.view = view_;
  out.next_generation = next_generation_;
  out.future = std::move(future_);
  for (const auto& [version, notice] : early_notices_)
    out.early_notices.push_back(notice);
  return out;
}

bool FenceEngine::in_flight() const {
  for (const auto& [generation, round] : rounds_)
    if (round.started && !round.release) return true;
  return !deferred_.empty();
}

void FenceEngine::begin(uint64_t generation, Blob mine) {
  Round& round = rounds_[generation];
  round.started = true;
  round.contributions[self_] = std::move(mine);
  try_rollup(generation);
}

void FenceEngine::try_rollup(uint64_t generation) {
  Round& round = rounds_[generation];
  if (!round.started || round.release) return;
  const topo::LiveTree& routing = tree(tag::Topology::routing);
  for (int child : routing.children(self_)) {
    auto it = round.reports.find(child);
    if (it == round.reports.end() || it->second < view_.version) return;
  }
  for (int member : routing.subtree(self_))
    if (round.contributions.count(member) == 0) return;
  const int parent = routing.parent(self_);
  if (parent < 0) {
    release_as_root(generation, round);
    return;
  }
  if (round.sent_version == view_.version && round.sent_to == parent) return;
  if (round.sent_version != UINT64_MAX) ++stats_.rollup_resends;
  round.sent_version = view_.version;
  round.sent_to = parent;
  FenceMessage m;
  m.header.kind = FenceKind::rollup;
  m.header.topology = tag::Topology::routing;
  m.header.generation = generation;
  m.contributions.assign(round.contributions.begin(), round.contributions.end());
  send({parent}, std::move(m));
}

void FenceEngine::release_as_root(uint64_t generation, Round& round) {
  FenceResult result;
  result.origin = self_;
  result.origin_version = view_.version;
  result.blobs.resize(static_cast<size_t>(size_));
  const topo::LiveTree& routing = tree(tag::Topology::routing);
  for (int rank = 0; rank < size_; ++rank) {
    if (routing.contains(rank))
      result.blobs[static_cast<size_t>(rank)] = round.contributions.at(rank);
    else
      result.departed.push_back(rank);
  }
  ++stats_.released;
  const PayloadKey key{static_cast<uint32_t>(self_), view_.version};
  bcast_.originate(op_id(generation), std::make_shared<const Blob>(encode_fence_result(result)),
                   transport_.now(), key);
}

void FenceEngine::on_rollup(int source, const FenceMessage& m) {
  const uint64_t generation = m.header.generation;
  if (generation < retired_below_) return;
  Round& round = rounds_[generation];
  if (round.release) return;  // the sender will be released on the release topology
  for (const auto& [rank, blob] : m.contributions) {
    if (rank >= size_) {
      throw Error(Errc::protocol, fmt::format("rank {}: fence: rank {} sent a contribution of "
                                              "rank {} of {}",
                                              self_, source, rank, size_));
    }
    round.contributions.try_emplace(rank, blob);
  }
  uint64_t& reported = round.reports[source];
  reported = std::max(reported, m.header.tree_version);
  try_rollup(generation);
}

// A result whose root departed travels up to the new root, which replays it:
// whoever holds one must never see the new root build a different one.
void FenceEngine::on_release_up(const FenceMessage& m) {
  const uint64_t generation = m.header.generation;
  if (generation < retired_below_ || rounds_[generation].release) return;
  ++stats_.adopted_up;
  bcast_.originate(op_id(generation), m.payload, m.release_started, m.key);
}

void FenceEngine::maybe_release_up(uint64_t generation) {
  Round& round = rounds_[generation];
  if (!round.release || view_.alive(round.origin)) return;
  const int parent = tree(tag::Topology::routing).parent(self_);
  if (parent < 0) return;  // this rank is the new root: its restart already replays
  if (round.up_version == view_.version && round.up_to == parent) return;
  round.up_version = view_.version;
  round.up_to = parent;
  FenceMessage m;
  m.header.kind = FenceKind::release_up;
  m.header.topology = tag::Topology::routing;
  m.header.generation = generation;
  m.payload = round.release;
  m.key = {static_cast<uint32_t>(round.origin), round.origin_version};
  m.total = round.release->size();  // whole: offset 0
  send({parent}, std::move(m));
}

void FenceEngine::delivered(const OpId& id, const std::shared_ptr<const Blob>& payload,
                            double started, double held) {
  Round& round = rounds_[id.generation];
  round.release = payload;
  ++stats_.results_held;
  try {
    FenceResult result = decode_fence_result(*payload, size_);
    round.origin = result.origin;
    round.origin_version = result.origin_version;
    if (unwanted_.erase(id.generation) == 0) results_[id.generation] = std::move(result);
  } catch (const Error& error) {
    record_error(error);
    return;
  }
  if (config_.timing) {
    FenceTiming& t = timings_[id.generation];
    t.started = started;
    t.held = held;
    t.payload_bytes = payload->size();
    while (timings_.size() > 64)
      timings_.erase(timings_.begin());
  }
  maybe_release_up(id.generation);
}

void FenceEngine::completed(const OpId& id, double held_latest) {
  if (!config_.timing || tree(id.topology).root() != self_) return;
  auto it = timings_.find(id.generation);
  if (it != timings_.end() && it->second.covered == 0) it->second.covered = held_latest;
}

// Starts deferred contributions whose previous generation is held, retires
// what every rank is known to hold, and sends held forwards that are due.
// Runs outside the reliable layer's loops, so retiring cannot pull an
// operation from under them.
void FenceEngine::poll() {
  while (!deferred_.empty()) {
    const uint64_t generation = deferred_.begin()->first;
    if (generation > 0) {
      auto previous = rounds_.find(generation - 1);
      const bool held = generation - 1 < retired_below_ ||
                        (previous != rounds_.end() && previous->second.release != nullptr);
      if (!held) break;
    }
    Blob mine = std::move(deferred_.begin()->second);
    deferred_.erase(deferred_.begin());
    begin(generation, std::move(mine));
  }
  // Holding g proves every living rank held g - 1 (it contributed to g only
  // after), so everything below g - 1 is done everywhere. g - 1 itself is
  // kept a little longer so its acks (and fence_timing's coverage) arrive.
  uint64_t newest_held = 0;
  for (const auto& [generation, round] : rounds_)
    if (round.release) newest_held = generation;
  if (newest_held >= 1 && newest_held - 1 > retired_below_) {
    retired_below_ = newest_held - 1;
    rounds_.erase(rounds_.begin(), rounds_.lower_bound(retired_below_));
    bcast_.retire_below(config_.release_topology(), context_, retired_below_);
  }
  bcast_.poll();
}

FenceResult FenceEngine::take_result(uint64_t generation) {
  auto it = results_.find(generation);
  if (it == results_.end()) {
    throw Error(Errc::internal,
                fmt::format("rank {}: fence: generation {} has no result here", self_, generation));
  }
  FenceResult out = std::move(it->second);
  results_.erase(it);
  return out;
}

void FenceEngine::forget(uint64_t generation) {
  if (results_.erase(generation) == 0 && generation < next_generation_)
    unwanted_.insert(generation);
}

std::optional<FenceTiming> FenceEngine::timing(uint64_t generation) const {
  auto it = timings_.find(generation);
  if (it == timings_.end()) return std::nullopt;
  return it->second;
}

std::string FenceEngine::describe_pending() const {
  std::string out =
      fmt::format("view version {} departed [{}]; ", view_.version, fmt::join(view_.departed, ","));
  for (const auto& [generation, round] : rounds_) {
    if (round.release) continue;
    std::vector<int> reported;
    for (const auto& [rank, version] : round.reports)
      if (version >= view_.version) reported.push_back(rank);
    out += fmt::format("rollup g{}: {} contributions, {} current reports [{}]{}; ", generation,
                       round.contributions.size(), reported.size(), fmt::join(reported, ","),
                       round.started ? "" : ", not started here");
  }
  if (!deferred_.empty())
    out += fmt::format("{} fence(s) waiting for the previous one; ", deferred_.size());
  return out + bcast_.describe();
}

}  // namespace grove::runtime
