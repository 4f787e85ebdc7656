#include "coll/gather.hpp"

#include <algorithm>
#include <cmath>

#include "coll/checks.hpp"
#include "coll/layout.hpp"
#include "coll/registry.hpp"
#include "coll/shm/collectives.hpp"
#include "coll/tree_steps.hpp"

namespace grove::coll {
namespace {

// Every block up the tree's edges to the root (tree_steps.hpp).
void up_tree(Plan& plan, const GatherArgs& a, topo::Shape shape, int radix = 0) {
  tree_gather(plan, topo::make_tree(shape, a.size, a.root, radix), a.rank,
              BlockLayout::uniform(a.size, a.block_bytes), input_region(0, a.block_bytes), 0);
}

const AlgorithmTable<GatherArgs> kGatherAlgorithms{
    Collective::gather,
    {
        {{.name = "flat",
          .doc = "every rank sends to the root",
          .cost = closed_form("u(m) + L + (P-2) w(m)",
                              "(P-1)(a+mb) [SEC]: there the receiver pays a per message",
                              cost::always, 0, false,
                              [](const CostCase& c, const PortModel& m) {
                                return m.u(c.bytes) + m.l(c.bytes) + (c.ranks - 2) * m.w(c.bytes);
                              })},
         [](Plan& p, const GatherArgs& a, const AlgorithmSpec&) {
           up_tree(p, a, topo::Shape::flat);
         }},
        {{.name = "binomial",
          .doc = "binomial tree, a subtree's blocks in one message",
          .cost = closed_form(
              "sum_{i<ceil(log2 P)} (u(s_i m) + L), s_i = min(2^i, P - 2^i): the root's "
              "children's subtrees",
              "lgp a + n(p-1)/p b [MPICH]", cost::power_of_two, 1.0, false,
              [](const CostCase& c, const PortModel& m) {
                // The path through child 2^i's subtree is at most the
                // gathers of the children below it (full, so smaller
                // doubling sums) and then its own message of s_i blocks.
                double t = 0;
                for (int i = 0; i < cost::ceil_log(c.ranks, 2); ++i) {
                  const double sent =
                      std::min<double>(std::ldexp(1.0, i), c.ranks - std::ldexp(1.0, i)) * c.bytes;
                  t += m.u(sent) + m.l(sent);
                }
                return t;
              })},
         [](Plan& p, const GatherArgs& a, const AlgorithmSpec&) {
           up_tree(p, a, topo::Shape::binomial);
         }},
        {{.name = "kary",
          .default_radix = 4,
          .doc = "k-ary heap tree (kary:K)",
          .example = "kary:4",
          .cost = closed_form(
              "sum over levels (u(S m) + L + (c-1) w(S m)), S = a child's subtree, c = min(k, "
              "P-1)",
              "none",
              [](const CostCase& c) {
                return cost::full_kary(c.ranks, cost::radix_of(c)) ||
                       c.ranks <= cost::radix_of(c) + 1;
              },
              4.0, false,
              [](const CostCase& c, const PortModel& m) {
                return cost::kary_gather(c.ranks, cost::radix_of(c), c.bytes, m);
              })},
         [](Plan& p, const GatherArgs& a, const AlgorithmSpec& spec) {
           up_tree(p, a, topo::Shape::kary, spec.radix);
         }},
        {shm::algorithm(Collective::gather), nullptr},
    }};

}  // namespace

CallFacts facts(const GatherArgs& a) {
  return CallFacts{.collective = Collective::gather,
                   .ranks = a.size,
                   .bytes = a.block_bytes,
                   .total = a.block_bytes * static_cast<uint64_t>(a.size),
                   .count = a.block_bytes};
}

sched::Schedule build_gather(const GatherArgs& a) {
  check_root("gather", a.rank, a.size, a.root);
  check_spec("gather", a.algorithm);
  const AlgorithmSpec spec = resolve(facts(a), a.algorithm);
  Plan plan("gather " + spec.to_string());
  if (a.block_bytes == 0) return plan.finish();
  kGatherAlgorithms.build(plan, a, spec);
  return plan.finish();
}

}  // namespace grove::coll
