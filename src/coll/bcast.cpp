#include "coll/bcast.hpp"

#include <algorithm>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "core/params.hpp"
#include "grove/error.hpp"
#include "topo/tree.hpp"

namespace grove::coll {

namespace {

using sched::Buffer;
using sched::Builder;
using sched::Region;
using sched::StepId;

const params::BytesParam bcast_segment_size_param{
    "bcast_segment_size", 64 * 1024, 1, uint64_t{1} << 30,
    "bcast pipeline: bytes per segment when the algorithm does not give seg= (seed value; the "
    "model layer will derive it)"};

// MPICH's bcast thresholds (MODELS.md §2): binomial if n < 12288 or p < 8.
constexpr size_t kAutoShortBytes = 12288;
constexpr int kAutoSmallSize = 8;

// Channels: 64 per tag. Messages that reuse a channel between the same pair
// of ranks are ordered explicitly (see the builders), because the transport
// matches them in posting order.
constexpr int kChannels = 64;

// A pipeline schedule holds two steps per segment; beyond this many segments
// the schedule itself (not the data) would dominate memory and time.
constexpr size_t kMaxSegments = size_t{1} << 20;

[[maybe_unused]] const bool registered = [] {
  register_algorithms(
      "bcast",
      {
          {"flat", 0, 2, 1 << 20, false, "the root sends to every rank", ""},
          {"chain", 0, 2, 1 << 20, false, "each rank forwards the whole message to the next", ""},
          {"pipeline", 0, 2, 1 << 20, true,
           "segmented chain (seg=SIZE, default bcast_segment_size)", ""},
          {"binary", 0, 2, 1 << 20, false, "binary heap tree", ""},
          {"kary", 3, 2, 1 << 20, false, "k-ary heap tree (kary:K)", "kary:4"},
          {"binomial", 0, 2, 1 << 20, false, "binomial tree", ""},
          {"knomial", 4, 2, 1 << 20, false, "k-nomial tree (knomial:K)", "knomial:4"},
          {"scatter_allgather", 0, 2, 1 << 20, false,
           "binomial scatter of size-th blocks, then ring allgather", ""},
      });
  return true;
}();

Region output(size_t offset, size_t length) {
  return Region{Buffer::output, offset, length};
}

StepId add_message(Builder& b, sched::Kind kind, int peer, int channel, Region region,
                   const std::vector<StepId>& after) {
  sched::Step step;
  step.kind = kind;
  step.peer = peer;
  step.channel = static_cast<uint8_t>(channel % kChannels);
  (kind == sched::Kind::send ? step.src : step.dst) = region;
  return b.add(step, after);
}

std::vector<StepId> deps_of(std::optional<StepId> id) {
  return id ? std::vector<StepId>{*id} : std::vector<StepId>{};
}

// Whole message down a tree: receive from the parent, then send to each
// child in the tree's serving order. One message per pair: no ordering issue.
void build_tree(Builder& b, const topo::Tree& tree, int rank, size_t bytes) {
  std::optional<StepId> received;
  const int parent = topo::parent(tree, rank);
  if (parent >= 0) received = add_message(b, sched::Kind::recv, parent, 0, output(0, bytes), {});
  const std::vector<StepId> after = deps_of(received);
  for (int child : topo::children(tree, rank))
    add_message(b, sched::Kind::send, child, 0, output(0, bytes), after);
}

// Segmented chain. Segment i travels on channel i % 64; a send waits for the
// segment's receive and for the send 64 segments earlier on its channel, so
// each (pair, channel) stream is sent in segment order and the receiver's
// receives (posted in step order) match in segment order.
void build_pipeline(Builder& b, const topo::Tree& chain, int rank, size_t bytes, uint64_t segment) {
  const int prev = topo::parent(chain, rank);
  const std::vector<int> next = topo::children(chain, rank);
  const size_t count = (bytes + segment - 1) / segment;
  if (count > kMaxSegments) {
    throw Error(Errc::invalid_argument,
                fmt::format("bcast pipeline: {} bytes in segments of {} B would be {} segments "
                            "(at most {}); choose a larger seg=",
                            bytes, segment, count, kMaxSegments));
  }
  std::vector<StepId> sends;
  sends.reserve(next.empty() ? 0 : count);
  for (size_t i = 0; i < count; ++i) {
    const size_t offset = i * segment;
    const Region piece = output(offset, std::min<size_t>(segment, bytes - offset));
    const int channel = static_cast<int>(i % kChannels);
    std::vector<StepId> after;
    if (prev >= 0) after.push_back(add_message(b, sched::Kind::recv, prev, channel, piece, {}));
    if (next.empty()) continue;
    if (i >= static_cast<size_t>(kChannels)) after.push_back(sends[i - kChannels]);
    sends.push_back(add_message(b, sched::Kind::send, next.front(), channel, piece, after));
  }
}

// Binomial scatter then ring allgather (MPICH's long-message bcast). Block j
// (virtual rank j's) is bytes [j*block, (j+1)*block) clipped to the message;
// blocks past the end are empty and never sent. Virtual rank v's binomial
// subtree is the contiguous range [v, v + subtree), so the scatter moves one
// contiguous range per tree edge.
//
// Ring: at step j, v sends block (v - j) to its right neighbour and receives
// block (v - j - 1) from its left one, on channel 1 + j % 63 (channel 0 is
// the scatter's). A rank skips ring blocks it already holds (its subtree's,
// or all of them at the root); the sender computes the same subtree and
// skips too. The block sent at step j arrived at step j - 1 or in the
// scatter, and a send also waits for the previous send on its channel.
void build_scatter_allgather(Builder& b, const topo::Tree& tree, int rank, size_t bytes) {
  const int64_t n = tree.size;
  const int64_t block = static_cast<int64_t>((bytes + n - 1) / n);
  auto range = [&](int64_t first, int64_t last) {  // blocks [first, last)
    const auto begin = static_cast<size_t>(std::min<int64_t>(first * block, bytes));
    const auto end = static_cast<size_t>(std::min<int64_t>(last * block, bytes));
    return output(begin, end - begin);
  };
  const int64_t v = topo::to_virtual(tree, rank);
  const int64_t own_end = v + topo::subtree_size(tree, rank);

  std::optional<StepId> scattered;
  const int parent = topo::parent(tree, rank);
  if (parent >= 0 && range(v, own_end).length > 0)
    scattered = add_message(b, sched::Kind::recv, parent, 0, range(v, own_end), {});
  for (int child : topo::children(tree, rank)) {
    const int64_t c = topo::to_virtual(tree, child);
    const Region part = range(c, c + topo::subtree_size(tree, child));
    if (part.length > 0) add_message(b, sched::Kind::send, child, 0, part, deps_of(scattered));
  }
  if (n == 1) return;

  const int64_t right = (v + 1) % n;
  const int64_t left = (v + n - 1) % n;
  const int64_t right_end =
      right == 0 ? n
                 : right + topo::subtree_size(tree, topo::to_real(tree, static_cast<int>(right)));
  auto holds = [&](int64_t x, int64_t first, int64_t end) {
    return first == 0 || (x >= first && x < end);
  };
  constexpr int kRingChannels = kChannels - 1;
  std::vector<std::optional<StepId>> received(static_cast<size_t>(n - 1));
  std::vector<std::optional<StepId>> last_send(kChannels);  // per channel
  for (int64_t j = 0; j + 1 < n; ++j) {
    const int channel = 1 + static_cast<int>(j % kRingChannels);
    const int64_t out_block = ((v - j) % n + n) % n;
    const Region out_part = range(out_block, out_block + 1);
    if (out_part.length > 0 && !holds(out_block, right, right_end)) {
      std::vector<StepId> after;
      if (!holds(out_block, v, own_end)) {
        after.push_back(*received[j - 1]);  // j >= 1 here: block v is always held
      } else if (scattered) {
        after.push_back(*scattered);
      }
      if (last_send[channel]) after.push_back(*last_send[channel]);
      last_send[channel] =
          add_message(b, sched::Kind::send, topo::to_real(tree, static_cast<int>(right)), channel,
                      out_part, after);
    }
    const int64_t in_block = ((v - j - 1) % n + n) % n;
    const Region in_part = range(in_block, in_block + 1);
    if (in_part.length > 0 && !holds(in_block, v, own_end)) {
      received[j] = add_message(b, sched::Kind::recv, topo::to_real(tree, static_cast<int>(left)),
                                channel, in_part, {});
    }
  }
}

void check_args(const BcastArgs& a) {
  if (a.size < 1 || a.rank < 0 || a.rank >= a.size || a.root < 0 || a.root >= a.size) {
    throw Error(Errc::invalid_argument,
                fmt::format("bcast: rank {}, root {} and size {} are inconsistent (need 0 <= "
                            "rank, root < size)",
                            a.rank, a.root, a.size));
  }
  if (a.algorithm.collective != "bcast") {
    throw Error(Errc::invalid_argument,
                fmt::format("bcast: algorithm '{}' belongs to collective '{}'",
                            a.algorithm.to_string(), a.algorithm.collective));
  }
}

}  // namespace

uint64_t bcast_segment_size() {
  return bcast_segment_size_param.get();
}

AlgorithmSpec choose_bcast_auto(int size, size_t bytes) {
  if (bytes < kAutoShortBytes || size < kAutoSmallSize) return parse_algorithm("bcast", "binomial");
  return parse_algorithm("bcast", "scatter_allgather");
}

AlgorithmSpec resolve_bcast(const AlgorithmSpec& spec, int size, size_t bytes) {
  AlgorithmSpec out = spec.is_auto() ? choose_bcast_auto(size, bytes) : spec;
  if (out.name == "pipeline" && out.segment == 0) out.segment = bcast_segment_size();
  return out;
}

sched::Schedule build_bcast(const BcastArgs& a) {
  check_args(a);
  const AlgorithmSpec spec = resolve_bcast(a.algorithm, a.size, a.bytes);
  Builder b;
  b.schedule().algorithm = "bcast " + spec.to_string();
  if (a.bytes == 0 || a.size == 1) return b.finish();

  const std::string& name = spec.name;
  if (name == "flat") {
    build_tree(b, topo::make_tree(topo::Shape::flat, a.size, a.root), a.rank, a.bytes);
  } else if (name == "chain") {
    build_tree(b, topo::make_tree(topo::Shape::chain, a.size, a.root), a.rank, a.bytes);
  } else if (name == "pipeline") {
    build_pipeline(b, topo::make_tree(topo::Shape::chain, a.size, a.root), a.rank, a.bytes,
                   spec.segment);
  } else if (name == "binary") {
    build_tree(b, topo::make_tree(topo::Shape::kary, a.size, a.root, 2), a.rank, a.bytes);
  } else if (name == "kary") {
    build_tree(b, topo::make_tree(topo::Shape::kary, a.size, a.root, spec.radix), a.rank, a.bytes);
  } else if (name == "binomial") {
    build_tree(b, topo::make_tree(topo::Shape::binomial, a.size, a.root), a.rank, a.bytes);
  } else if (name == "knomial") {
    build_tree(b, topo::make_tree(topo::Shape::knomial, a.size, a.root, spec.radix), a.rank,
               a.bytes);
  } else if (name == "scatter_allgather") {
    build_scatter_allgather(b, topo::make_tree(topo::Shape::binomial, a.size, a.root), a.rank,
                            a.bytes);
  } else {
    throw Error(Errc::internal, fmt::format("bcast: no builder for algorithm '{}'", name));
  }
  return b.finish();
}

}  // namespace grove::coll
