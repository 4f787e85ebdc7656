#include "coll/barrier.hpp"

#include "coll/checks.hpp"
#include "coll/hierarchical.hpp"
#include "coll/registry.hpp"
#include "coll/shm/collectives.hpp"
#include "coll/tree_steps.hpp"
#include "topo/tree.hpp"

namespace grove::coll {
namespace {

// Channels of the tree barriers: fan-in, fan-out. (Dissemination round r
// uses channel r.)
constexpr int kFanIn = 0;
constexpr int kFanOut = 1;

// Round r's send waits for the receives of every earlier round (not just
// round r-1's: receives are posted up front and may complete out of order).
// By induction, after round r a rank has heard (transitively) from the
// 2^(r+1) - 1 ranks before it. Rounds use distinct channels (at most 31), so
// a peer met in two rounds (small sizes) is never confused.
void dissemination(Plan& plan, const BarrierArgs& a, const AlgorithmSpec&) {
  Deps heard;
  int round = 0;
  for (int64_t distance = 1; distance < a.size; distance *= 2, ++round) {
    plan.send(static_cast<int>((a.rank + distance) % a.size), round, output_region(0, 0), heard);
    const int from = static_cast<int>((a.rank - distance % a.size + a.size) % a.size);
    heard.add(plan.recv(from, round, output_region(0, 0)));
  }
}

// Fan-in to rank 0, then fan-out from it. The root's release waits for every
// arrival through one join step, so each release send has one dependency
// (the flat root would otherwise need size^2 dependency entries).
void tree_barrier(Plan& plan, const topo::Tree& tree, int rank) {
  const Deps arrived = tree_fan_in(plan, tree, rank, kFanIn);
  const bool root = topo::parent(tree, rank) < 0;
  tree_fan_out(plan, tree, rank, kFanOut, root ? Deps{plan.join(arrived)} : Deps{});
}

const AlgorithmTable<BarrierArgs> kBarrierAlgorithms{
    Collective::barrier,
    {
        {{.name = "dissemination",
          .doc = "round r: send to rank+2^r, receive from rank-2^r",
          .cost = closed_form("ceil(log2 P) (u(0) + L)", "ceil(lgp) a [DER][SEC]", cost::always, 0,
                              false,
                              [](const CostCase& c, const PortModel& m) {
                                return cost::ceil_log(c.ranks, 2) * (m.u(0) + m.l(0));
                              })},
         &dissemination},
        {{.name = "knomial",
          .default_radix = 4,
          .doc = "fan-in then fan-out on a k-nomial tree (knomial:K)",
          .example = "knomial:4",
          .cost = closed_form(
              "d (k u(0) + 2 L + (k-2) w(0)), d = ceil(log_k P): fan-in d (u(0) + L + (k-2) "
              "w(0)), fan-out d ((k-1) u(0) + L)",
              "none", [](const CostCase& c) { return cost::is_power(c.ranks, cost::radix_of(c)); },
              0.7, true,
              [](const CostCase& c, const PortModel& m) {
                const int k = cost::radix_of(c);
                return cost::ceil_log(c.ranks, k) * (k * m.u(0) + 2 * m.l(0) + (k - 2) * m.w(0));
              })},
         [](Plan& p, const BarrierArgs& a, const AlgorithmSpec& spec) {
           tree_barrier(p, topo::make_tree(topo::Shape::knomial, a.size, 0, spec.radix), a.rank);
         }},
        {{.name = "flat",
          .doc = "every rank to rank 0, then rank 0 to every rank",
          .cost = closed_form("P u(0) + 2 L + (P-2) w(0)", "none", cost::always, 0, false,
                              [](const CostCase& c, const PortModel& m) {
                                return c.ranks * m.u(0) + 2 * m.l(0) + (c.ranks - 2) * m.w(0);
                              })},
         [](Plan& p, const BarrierArgs& a, const AlgorithmSpec&) {
           tree_barrier(p, topo::make_tree(topo::Shape::flat, a.size, 0), a.rank);
         }},
        {shm::algorithm(Collective::barrier), nullptr},
        {hierarchical_algorithm(), nullptr},
    }};

}  // namespace

CallFacts facts(const BarrierArgs& a) {
  return CallFacts{.collective = Collective::barrier, .ranks = a.size};
}

sched::Schedule build_barrier(const BarrierArgs& a) {
  check_rank("barrier", a.rank, a.size);
  check_spec("barrier", a.algorithm);
  const AlgorithmSpec spec = resolve(facts(a), a.algorithm);
  Plan plan("barrier " + spec.to_string());
  if (a.size == 1) return plan.finish();
  kBarrierAlgorithms.build(plan, a, spec);
  return plan.finish();
}

}  // namespace grove::coll
