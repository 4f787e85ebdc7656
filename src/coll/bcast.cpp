#include "coll/bcast.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "coll/checks.hpp"
#include "coll/hierarchical.hpp"
#include "coll/registry.hpp"
#include "coll/shm/collectives.hpp"
#include "coll/tree_steps.hpp"
#include "core/params.hpp"
#include "grove/error.hpp"
#include "topo/tree.hpp"

namespace grove::coll {

namespace {

const params::BytesParam bcast_segment_size_param{
    "bcast_segment_size", 64 * 1024, 1, uint64_t{1} << 30,
    "bcast pipeline: bytes per segment when neither the algorithm (seg=) nor a selection row "
    "gives one"};

// A pipeline schedule holds two steps per segment; beyond this many segments
// the schedule itself (not the data) would dominate memory and time.
constexpr size_t kMaxSegments = size_t{1} << 20;

// The whole message down a tree (tree_steps.hpp): receive from the parent,
// then send to each child in the tree's serving order.
void down_tree(Plan& plan, topo::Shape shape, const BcastArgs& a, int radix = 0) {
  tree_bcast(plan, topo::make_tree(shape, a.size, a.root, radix), a.rank, output_region(0, a.bytes),
             0);
}

// Segmented chain. Segment i travels on channel i % 64; Plan orders the
// messages that share a channel, so each (pair, channel) stream carries its
// segments in order.
void pipeline(Plan& plan, const BcastArgs& a, const AlgorithmSpec& spec) {
  const topo::Tree chain = topo::make_tree(topo::Shape::chain, a.size, a.root);
  const int prev = topo::parent(chain, a.rank);
  const std::vector<int> next = topo::children(chain, a.rank);
  const uint64_t segment = spec.segment;
  const size_t count = (a.bytes + segment - 1) / segment;
  if (count > kMaxSegments) {
    throw Error(Errc::invalid_argument,
                fmt::format("bcast pipeline: {} bytes in segments of {} B would be {} segments "
                            "(at most {}); choose a larger seg=",
                            a.bytes, segment, count, kMaxSegments));
  }
  for (size_t i = 0; i < count; ++i) {
    const size_t offset = i * segment;
    const Region piece = output_region(offset, std::min<size_t>(segment, a.bytes - offset));
    const int channel = static_cast<int>(i % kChannels);
    Deps after;
    if (prev >= 0) after.add(plan.recv(prev, channel, piece));
    if (!next.empty()) plan.send(next.front(), channel, piece, after);
  }
}

// Binomial scatter then ring allgather (MPICH's long-message bcast). Block j
// (virtual rank j's) is bytes [j*block, (j+1)*block) clipped to the message;
// blocks past the end are empty and move nothing. Virtual rank v's binomial
// subtree is the contiguous range [v, v + subtree), so the scatter moves one
// contiguous range per tree edge.
//
// Ring: at step j, v sends block (v - j) to its right neighbour and receives
// block (v - j - 1) from its left one, on channel 1 + j % 63 (channel 0 is
// the scatter's). A rank skips ring blocks it already holds (its subtree's,
// or all of them at the root); the sender computes the same subtree and
// skips too. The block sent at step j arrived at step j - 1 or in the
// scatter.
//
// Every region is a block (or a run of blocks) of the message's layout in
// virtual-rank order, and a step of an empty block stays in the schedule:
// the executor completes a message of an empty marked block without posting
// it, on both sides. So the steps depend on the rank only through its
// neighbourhood in the tree (RingShape), and ranks of the same shape run one
// schedule relabelled (the simulator shares it; docs/simulator.md). Where a
// subtree is too many blocks for a marked run (Region::span), the regions
// are unmarked and empty blocks skipped instead.
struct RingShape {
  int64_t v = 0, n = 1;
  int64_t own = 1;         // v's subtree: blocks [v, v + own)
  int64_t right = 0;       // (v + 1) mod n
  int64_t right_own = 1;   // the right neighbour's subtree (n at the root)
  int64_t parent_gap = 0;  // v - the parent's virtual rank (0 at the root)
  std::vector<std::pair<int64_t, int64_t>> children;  // (c - v, c's subtree), serving order

  RingShape(const topo::Tree& tree, int rank) : v(topo::to_virtual(tree, rank)), n(tree.size) {
    own = topo::subtree_size(tree, rank);
    right = (v + 1) % n;
    right_own =
        right == 0 ? n : topo::subtree_size(tree, topo::to_real(tree, static_cast<int>(right)));
    const int parent = topo::parent(tree, rank);
    parent_gap = parent < 0 ? 0 : v - topo::to_virtual(tree, parent);
    for (const int child : topo::children(tree, rank)) {
      const int64_t c = topo::to_virtual(tree, child);
      children.emplace_back(c - v, topo::subtree_size(tree, child));
    }
  }
  // A run of blocks fits a marked region (and the root holds every block).
  bool markable() const {
    if (own > UINT16_MAX && v != 0) return false;
    for (const auto& [gap, size] : children)
      if (size > UINT16_MAX) return false;
    return true;
  }
  uint64_t key() const {
    uint64_t h = 0xcbf29ce484222325ull;
    auto mix = [&h](int64_t x) { h = (h ^ static_cast<uint64_t>(x)) * 0x100000001b3ull; };
    for (const int64_t x : {n, static_cast<int64_t>(v == 0), static_cast<int64_t>(right == 0), own,
                            right_own, parent_gap, static_cast<int64_t>(children.size())})
      mix(x);
    for (const auto& [gap, size] : children) {
      mix(gap);
      mix(size);
    }
    return h | 1;  // never 0 (no shape)
  }
};

void scatter_allgather(Plan& plan, const topo::Tree& tree, int rank, size_t bytes) {
  const int64_t n = tree.size;
  const int64_t block = static_cast<int64_t>((bytes + n - 1) / n);
  const RingShape shape(tree, rank);
  const bool marked = n > 1 && shape.markable();
  BlockLayout layout;
  if (marked) {
    for (int64_t j = 0; j < n; ++j) {
      const auto begin = static_cast<size_t>(std::min<int64_t>(j * block, bytes));
      const auto end = static_cast<size_t>(std::min<int64_t>((j + 1) * block, bytes));
      layout.offsets.push_back(begin);
      layout.lengths.push_back(end - begin);
    }
    plan.set_shape_symmetry(rank, static_cast<int>(n), layout, shape.key());
  }
  auto range = [&](int64_t first, int64_t last) {  // blocks [first, last)
    if (marked) {
      return last - first == 1 ? block_region(Buffer::output, layout, static_cast<size_t>(first))
                               : block_span(Buffer::output, layout, static_cast<size_t>(first),
                                            static_cast<size_t>(last - first));
    }
    const auto begin = static_cast<size_t>(std::min<int64_t>(first * block, bytes));
    const auto end = static_cast<size_t>(std::min<int64_t>(last * block, bytes));
    return output_region(begin, end - begin);
  };
  // Marked, a step of an empty block stays (it moves nothing); else it is skipped.
  auto kept = [&](const Region& r) { return marked || r.length > 0; };
  const int64_t v = shape.v;
  const int64_t own_end = v + shape.own;

  std::optional<StepId> scattered;
  const int parent = topo::parent(tree, rank);
  if (parent >= 0 && kept(range(v, own_end))) scattered = plan.recv(parent, 0, range(v, own_end));
  for (int child : topo::children(tree, rank)) {
    const int64_t c = topo::to_virtual(tree, child);
    const Region part = range(c, c + topo::subtree_size(tree, child));
    if (kept(part)) plan.send(child, 0, part, Deps().add(scattered));
  }
  if (n == 1) return;

  const int64_t right = shape.right;
  const int64_t left = (v + n - 1) % n;
  const int64_t right_end = right == 0 ? n : right + shape.right_own;
  auto holds = [&](int64_t x, int64_t first, int64_t end) {
    return first == 0 || (x >= first && x < end);
  };
  constexpr int kRingChannels = kChannels - 1;
  std::vector<std::optional<StepId>> received(static_cast<size_t>(n - 1));
  for (int64_t j = 0; j + 1 < n; ++j) {
    const int channel = 1 + static_cast<int>(j % kRingChannels);
    const int64_t out_block = ((v - j) % n + n) % n;
    const Region out_part = range(out_block, out_block + 1);
    if (kept(out_part) && !holds(out_block, right, right_end)) {
      // j >= 1 when the block is not this rank's own: block v is always held.
      const Deps after =
          holds(out_block, v, own_end) ? Deps().add(scattered) : Deps().add(received[j - 1]);
      plan.send(topo::to_real(tree, static_cast<int>(right)), channel, out_part, after);
    }
    const int64_t in_block = ((v - j - 1) % n + n) % n;
    const Region in_part = range(in_block, in_block + 1);
    if (kept(in_part) && !holds(in_block, v, own_end))
      received[j] = plan.recv(topo::to_real(tree, static_cast<int>(left)), channel, in_part);
  }
}

constexpr const char* kKaryFormula =
    "max((d-1)(k u(m) + L), (d + s) u(m) + d L): d = heap height, s = the largest base-k digit "
    "sum below the last level's rank count; d (k u(m) + L) for a full tree";

double kary_cost(const CostCase& c, const PortModel& m) {
  return cost::kary_bcast(c.ranks, cost::radix_of(c), c.bytes, m);
}

// The whole message down a knomial tree (binomial: k = 2) whose ranks' sends
// share their port (PortModel::shared_port).
double shared_knomial(const CostCase& c, const PortModel& m, int k) {
  const topo::Tree tree =
      topo::make_tree(k == 2 ? topo::Shape::binomial : topo::Shape::knomial, c.ranks, 0, k);
  return cost::shared_fan_out(
      tree, [&c](int) { return c.bytes; }, m);
}

// Scatter then ring as the schedule sends them (scatter_allgather above):
// the root sends child 2^i its subtree's blocks [2^i, 2^i + min(2^i, P -
// 2^i)) clipped to the message, and nothing when that range is empty (a
// message shorter than P blocks); block 0 travels the whole ring. At P = 2
// each phase is one message from the root to rank 1, both posted at the
// start: they leave back to back and share one latency, which the sum of
// phases would count twice.
double scatter_allgather_cost(const CostCase& c, const PortModel& m) {
  const int p = c.ranks;
  const double b = std::ceil(c.bytes / p);
  auto span_bytes = [&](double first, double count) {  // blocks [first, first + count)
    return std::min((first + count) * b, c.bytes) - std::min(first * b, c.bytes);
  };
  if (p == 2) {
    const double scattered = span_bytes(1, 1);
    return (scattered > 0 ? m.u(scattered) : 0) + m.u(b) + m.l(b);
  }
  const double ring = (p - 1) * (m.u(b) + m.l(b));
  if (m.shared_port) {
    const topo::Tree tree = topo::make_tree(topo::Shape::binomial, p, 0);
    return cost::shared_fan_out(
               tree, [&](int child) { return span_bytes(child, topo::subtree_size(tree, child)); },
               m) +
           ring;
  }
  double t = 0;
  for (int i = 0; i < cost::ceil_log(p, 2); ++i) {
    const double first = std::ldexp(1.0, i);
    const double part = span_bytes(first, std::min(first, p - first));
    if (part > 0) t += m.u(part) + m.l(part);
  }
  return t + ring;
}

const AlgorithmTable<BcastArgs> kBcastAlgorithms{
    Collective::bcast,
    {
        {{.name = "flat",
          .doc = "the root sends to every rank",
          .cost = closed_form("(P-1) u(m) + L", "(P-1)g(m) + L [REC]", cost::always, 0, false,
                              [](const CostCase& c, const PortModel& m) {
                                return (c.ranks - 1) * m.u(c.bytes) + m.l(c.bytes);
                              })},
         [](Plan& p, const BcastArgs& a, const AlgorithmSpec&) {
           down_tree(p, topo::Shape::flat, a);
         }},
        {{.name = "chain",
          .doc = "each rank forwards the whole message to the next",
          .cost = closed_form("(P-1) (u(m) + L)", "(P-1)(g(m) + L) [REC]", cost::always, 0, false,
                              [](const CostCase& c, const PortModel& m) {
                                return (c.ranks - 1) * (m.u(c.bytes) + m.l(c.bytes));
                              })},
         [](Plan& p, const BcastArgs& a, const AlgorithmSpec&) {
           down_tree(p, topo::Shape::chain, a);
         }},
        {{.name = "pipeline",
          .takes_segment = true,
          .doc = "segmented chain (seg=SIZE, default bcast_segment_size)",
          .default_segment = [] { return bcast_segment_size_param.get(); },
          .cost = closed_form(
              "(S + P - 2) u(s) + (P-1) L, S = ceil(m/s) segments of s bytes",
              "(P-1)(g(s)+L) + (k-1)g(s) [REC]; (P+ns-2)(a+ms b) [SEC]",
              [](const CostCase& c) {
                return std::fmod(c.bytes, static_cast<double>(c.spec->segment)) == 0;
              },
              0.5, false,
              [](const CostCase& c, const PortModel& m) {
                const double s = std::min(static_cast<double>(c.spec->segment), c.bytes);
                const double segments = std::ceil(c.bytes / s);
                return (segments + c.ranks - 2) * m.u(s) + (c.ranks - 1) * m.l(s);
              })},
         &pipeline},
        {{.name = "binary",
          .doc = "binary heap tree",
          .cost = closed_form(kKaryFormula,
                              "(ceil(log2(P+1)) + ns - 2)(2a + ms b) [SEC]: the b "
                              "term is 2 ms b",
                              cost::always, 0, false, &kary_cost)},
         [](Plan& p, const BcastArgs& a, const AlgorithmSpec&) {
           down_tree(p, topo::Shape::kary, a, 2);
         }},
        {{.name = "kary",
          .default_radix = 3,
          .doc = "k-ary heap tree (kary:K)",
          .example = "kary:4",
          .cost = closed_form(kKaryFormula, "d k(a+mb) [DER] (full trees)", cost::always, 0, false,
                              &kary_cost)},
         [](Plan& p, const BcastArgs& a, const AlgorithmSpec& spec) {
           down_tree(p, topo::Shape::kary, a, spec.radix);
         }},
        {{.name = "binomial",
          .doc = "binomial tree",
          .cost = closed_form("ceil(log2 P) u(m) + floor(log2 P) L",
                              "floor(log2 P)g(m) + ceil(log2 P)L [REC]: floor and ceil swapped; "
                              "lgp(a+nb) [MPICH]",
                              cost::always, 0, false,
                              [](const CostCase& c, const PortModel& m) {
                                if (m.shared_port) return shared_knomial(c, m, 2);
                                return cost::ceil_log(c.ranks, 2) * m.u(c.bytes) +
                                       cost::floor_log2(c.ranks) * m.l(c.bytes);
                              })},
         [](Plan& p, const BcastArgs& a, const AlgorithmSpec&) {
           down_tree(p, topo::Shape::binomial, a);
         }},
        {{.name = "knomial",
          .default_radix = 4,
          .doc = "k-nomial tree (knomial:K)",
          .example = "knomial:4",
          .cost = closed_form(
              "(t + (d-1)(k-1)) u(m) + d L, d = ceil(log_k P), t = ceil(P / k^(d-1)) - 1 "
              "children of the root's top level",
              "(k-1)ceil(log_k P)(a+mb) [DER]",
              [](const CostCase& c) { return cost::is_power(c.ranks, cost::radix_of(c)); }, 1.0,
              false,
              [](const CostCase& c, const PortModel& m) {
                const int k = cost::radix_of(c);
                if (m.shared_port) return shared_knomial(c, m, k);
                const int d = cost::ceil_log(c.ranks, k);
                if (d == 0) return 0.0;
                // The top level has only as many subtrees as the ranks fill
                // (one at P = 2 whatever k): a full tree's k - 1 over-counts.
                double below = 1;
                for (int i = 1; i < d; ++i)
                  below *= k;
                const double top = std::ceil(c.ranks / below) - 1;
                return (top + (d - 1) * (k - 1)) * m.u(c.bytes) + d * m.l(c.bytes);
              })},
         [](Plan& p, const BcastArgs& a, const AlgorithmSpec& spec) {
           down_tree(p, topo::Shape::knomial, a, spec.radix);
         }},
        {{.name = "scatter_allgather",
          .doc = "binomial scatter of size-th blocks, then ring allgather",
          .cost = closed_form(
              "P = 2: [m > b] u(m - b) + u(b) + L; else scatter sum_i (u(m_i) + L) over the root's "
              "non-empty sends m_i + ring (P-1)(u(b) + L), b = ceil(m/P): a sum of phases that "
              "in fact overlap and stall",
              "(lgp + p - 1)a + 2n(p-1)/p b [MPICH]",
              [](const CostCase& c) { return c.ranks == 2; }, 0.6, true, &scatter_allgather_cost)},
         [](Plan& p, const BcastArgs& a, const AlgorithmSpec&) {
           scatter_allgather(p, topo::make_tree(topo::Shape::binomial, a.size, a.root), a.rank,
                             a.bytes);
         }},
        {shm::algorithm(Collective::bcast), nullptr},
        {hierarchical_algorithm(), nullptr},
    }};

}  // namespace

CallFacts facts(const BcastArgs& a) {
  return CallFacts{.collective = Collective::bcast,
                   .ranks = a.size,
                   .bytes = a.bytes,
                   .total = a.bytes,
                   .count = a.bytes};
}

uint64_t bcast_shape(const BcastArgs& a) {
  check_root("bcast", a.rank, a.size, a.root);
  const AlgorithmSpec spec = resolve(facts(a), a.algorithm);
  if (spec.name != "scatter_allgather" || a.bytes == 0 || a.size == 1) return 0;
  const RingShape shape(topo::make_tree(topo::Shape::binomial, a.size, a.root), a.rank);
  return shape.markable() ? shape.key() : 0;
}

sched::Schedule build_bcast(const BcastArgs& a) {
  check_root("bcast", a.rank, a.size, a.root);
  check_spec("bcast", a.algorithm);
  const AlgorithmSpec spec = resolve(facts(a), a.algorithm);
  Plan plan("bcast " + spec.to_string());
  if (a.bytes == 0 || a.size == 1) return plan.finish();
  kBcastAlgorithms.build(plan, a, spec);
  return plan.finish();
}

}  // namespace grove::coll
