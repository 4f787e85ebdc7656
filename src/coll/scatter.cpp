#include "coll/scatter.hpp"

#include <algorithm>

#include "coll/checks.hpp"
#include "coll/layout.hpp"
#include "coll/registry.hpp"
#include "coll/shm/collectives.hpp"
#include "coll/tree_steps.hpp"

namespace grove::coll {
namespace {

// Every block down the tree's edges from the root (tree_steps.hpp).
template <topo::Shape kShape>
void scatter_down_tree(Plan& plan, const ScatterArgs& a, const AlgorithmSpec&) {
  tree_scatter(plan, topo::make_tree(kShape, a.size, a.root), a.rank,
               BlockLayout::uniform(a.size, a.block_bytes), Buffer::input,
               output_region(0, a.block_bytes), 0);
}

// The copies on a tree scatter's critical path (ClosedForm::copies): every
// rank that sends on it copies its own block once (tree_steps.cpp). A relay
// copies its block out of the received pack before it forwards: c(m) on
// the path. The root copies after posting its sends and before the executor
// progresses them: a send that needs its sender again after posting (a
// rendezvous, whose grant comes back a round trip 2 (u(0) + L) after the
// request) waits for whatever of the copy outlasts that round trip, and a
// send complete at posting does not wait at all. flat: the root; binomial:
// the root and ceil(log2 P) - 1 relays; chain: the root and P - 2 relays.
template <topo::Shape kShape>
double own_block_copies(const CostCase& c, const PortModel& m) {
  int relays = 0;
  if (kShape == topo::Shape::binomial) relays = cost::ceil_log(c.ranks, 2) - 1;
  if (kShape == topo::Shape::chain) relays = c.ranks - 2;
  const double copy = m.copy(c.bytes);
  const double round_trip = 2 * (m.u(0) + m.l(0));
  return std::max(0.0, copy - round_trip) + relays * copy;
}

const AlgorithmTable<ScatterArgs> kScatterAlgorithms{
    Collective::scatter,
    {
        {{.name = "flat",
          .doc = "the root sends every block directly",
          .cost = with_copies(
              closed_form("(P-1) u(m) + L", "(P-1)g(m) + L [REC]", cost::always, 0, false,
                          [](const CostCase& c, const PortModel& m) {
                            return (c.ranks - 1) * m.u(c.bytes) + m.l(c.bytes);
                          }),
              "max(0, c(m) - 2 (u(0) + L))", &own_block_copies<topo::Shape::flat>)},
         &scatter_down_tree<topo::Shape::flat>},
        {{.name = "binomial",
          .doc = "binomial tree, a subtree's blocks in one message",
          .cost = with_copies(
              closed_form("sum_{i<log2 P} u(2^i m) + log2(P) L",
                          "sum_j g(2^j m) + ceil(log2 P)L [REC]", cost::power_of_two, 1.0, false,
                          [](const CostCase& c, const PortModel& m) {
                            if (m.shared_port) {
                              // A child's message: its subtree's blocks.
                              const topo::Tree tree =
                                  topo::make_tree(topo::Shape::binomial, c.ranks, 0);
                              return cost::shared_fan_out(
                                  tree,
                                  [&](int child) {
                                    return topo::subtree_size(tree, child) * c.bytes;
                                  },
                                  m);
                            }
                            return cost::sum_doubling(cost::ceil_log(c.ranks, 2), c.bytes, m);
                          }),
              "max(0, c(m) - 2 (u(0) + L)) + (ceil(log2 P) - 1) c(m)",
              &own_block_copies<topo::Shape::binomial>)},
         &scatter_down_tree<topo::Shape::binomial>},
        {{.name = "chain",
          .doc = "each rank keeps its block and forwards the rest",
          .cost = with_copies(closed_form("sum_{j=1}^{P-1} (u(j m) + L)",
                                          "sum_j g(j m) + (P-1)L [REC]", cost::always, 0, false,
                                          [](const CostCase& c, const PortModel& m) {
                                            double t = 0;
                                            for (int j = 1; j < c.ranks; ++j)
                                              t += m.u(j * c.bytes) + m.l(j * c.bytes);
                                            return t;
                                          }),
                              "max(0, c(m) - 2 (u(0) + L)) + (P-2) c(m)",
                              &own_block_copies<topo::Shape::chain>)},
         &scatter_down_tree<topo::Shape::chain>},
        {shm::algorithm(Collective::scatter), nullptr},
    }};

}  // namespace

CallFacts facts(const ScatterArgs& a) {
  return CallFacts{.collective = Collective::scatter,
                   .ranks = a.size,
                   .bytes = a.block_bytes,
                   .total = a.block_bytes * static_cast<uint64_t>(a.size),
                   .count = a.block_bytes};
}

sched::Schedule build_scatter(const ScatterArgs& a) {
  check_root("scatter", a.rank, a.size, a.root);
  check_spec("scatter", a.algorithm);
  const AlgorithmSpec spec = resolve(facts(a), a.algorithm);
  Plan plan("scatter " + spec.to_string());
  if (a.block_bytes == 0) return plan.finish();
  kScatterAlgorithms.build(plan, a, spec);
  return plan.finish();
}

}  // namespace grove::coll
