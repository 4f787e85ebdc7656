#include "coll/reduce.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "coll/checks.hpp"
#include "coll/halving_steps.hpp"
#include "coll/hierarchical.hpp"
#include "coll/registry.hpp"
#include "coll/shm/collectives.hpp"
#include "grove/error.hpp"
#include "topo/tree.hpp"

namespace grove::coll {
namespace {

// The root's contribution and where every rank accumulates.
struct ReduceStart {
  Region mine;
  Region acc;
  Deps ready;  // acc holds this rank's contribution after these
};

ReduceStart start_reduce(Plan& plan, const ReduceArgs& a, size_t bytes, bool needs_acc) {
  ReduceStart s;
  if (a.rank == a.root) {
    s.acc = output_region(0, bytes);
    s.mine = a.in_place ? s.acc : input_region(0, bytes);
    if (!a.in_place) s.ready.add(plan.copy(s.mine, s.acc));
    return s;
  }
  s.mine = input_region(0, bytes);
  if (needs_acc) {
    s.acc = plan.take_scratch(bytes);
    s.ready.add(plan.copy(s.mine, s.acc));
  }
  return s;
}

void build_reduce_binomial(Plan& plan, const ReduceArgs& a, size_t bytes) {
  const topo::Tree tree = topo::make_tree(topo::Shape::binomial, a.size, a.root);
  std::vector<int> kids = topo::children(tree, a.rank);
  // Nearest child (smallest subtree, ready first) first.
  std::sort(kids.begin(), kids.end(),
            [&](int x, int y) { return topo::to_virtual(tree, x) < topo::to_virtual(tree, y); });
  const int parent = topo::parent(tree, a.rank);
  const ReduceStart s = start_reduce(plan, a, bytes, !kids.empty());
  if (kids.empty()) {
    if (parent >= 0) plan.send(parent, 0, s.mine);
    return;
  }
  // Two receive buffers in turn: child j's may arrive while child j-1's is
  // being reduced.
  const Region buffers[2] = {plan.take_scratch(bytes),
                             kids.size() > 1 ? plan.take_scratch(bytes) : Region{}};
  Deps ready = s.ready;
  std::optional<StepId> reduced[2];
  for (size_t j = 0; j < kids.size(); ++j) {
    const Region buffer = buffers[j % 2];
    const StepId got = plan.recv(kids[j], 0, buffer, Deps().add(reduced[j % 2]));
    reduced[j % 2] = plan.reduce(buffer, s.acc, Deps(ready).add(got));
    ready = Deps().add(reduced[j % 2]);
  }
  if (parent >= 0) plan.send(parent, 0, s.acc, ready);
}

void build_reduce_rabenseifner(Plan& plan, const ReduceArgs& a, size_t bytes) {
  const Fold fold(a.size);
  const Ranks ranks{a.root, a.size};
  const int relative = ranks.relative(a.rank);
  if (fold.sits_out(relative)) {
    fold_in(plan, fold, ranks, relative, input_region(0, bytes), {}, {}, 0, {});
    return;
  }
  const ReduceStart s = start_reduce(plan, a, bytes, true);
  const Region incoming = plan.take_scratch(bytes);
  const Phase folded = fold_in(plan, fold, ranks, relative, s.mine, s.acc, incoming, 0, s.ready);
  const int v = fold.virtual_of(relative);
  const BlockLayout chunks = BlockLayout::split(a.count, datatype_size(a.dtype), fold.p2);
  const Phase halved = recursive_halving(plan, fold, ranks, v, chunks, s.acc, incoming, 1,
                                         Deps(s.ready).add(folded.done));
  binomial_gather(plan, fold, ranks, v, chunks, s.acc, 1 + fold.steps, halved.done, halved.sends);
}

const AlgorithmTable<ReduceArgs> kReduceAlgorithms{
    Collective::reduce,
    {
        {{.name = "binomial",
          .doc = "binomial tree to the root",
          .cost = closed_form(
              "floor(log2 P) (u(n) + L), other P + w(n): the most hops to the root; "
              "children arrive apart at powers of two",
              "lgp(a + nb + ng) [MPICH]", cost::power_of_two, 0.3, true,
              [](const CostCase& c, const PortModel& m) {
                // Other P: two children can arrive together; one waits w(n).
                const double queue = cost::is_power(c.ranks, 2) ? 0 : m.w(c.bytes);
                return cost::floor_log2(c.ranks) * (m.u(c.bytes) + m.l(c.bytes)) + queue;
              })},
         [](Plan& p, const ReduceArgs& a, const AlgorithmSpec&) {
           build_reduce_binomial(p, a, a.count * datatype_size(a.dtype));
         }},
        {{.name = "rabenseifner",
          .doc = "reduce-scatter by recursive halving, then binomial gather",
          .cost = closed_form(
              "2 sum_{i=1}^{log2 P} (u(n / 2^i) + L); other P: + (u(n) + L) for the fold",
              "2lgp a + 2n(p-1)/p b + n(p-1)/p g [MPICH]", cost::even_split, 0.3, true,
              [](const CostCase& c, const PortModel& m) {
                const int p2 = 1 << cost::floor_log2(c.ranks);
                const double fold = p2 == c.ranks ? 0 : m.u(c.bytes) + m.l(c.bytes);
                return fold + 2 * cost::halving(p2, c.bytes, m);
              })},
         [](Plan& p, const ReduceArgs& a, const AlgorithmSpec&) {
           build_reduce_rabenseifner(p, a, a.count * datatype_size(a.dtype));
         }},
        {shm::algorithm(Collective::reduce), nullptr},
        {hierarchical_algorithm(), nullptr},
    }};

}  // namespace

CallFacts facts(const ReduceArgs& a) {
  const uint64_t bytes = a.count * datatype_size(a.dtype);
  return CallFacts{.collective = Collective::reduce,
                   .ranks = a.size,
                   .bytes = bytes,
                   .total = bytes,
                   .count = a.count};
}

sched::Schedule build_reduce(const ReduceArgs& a) {
  check_root("reduce", a.rank, a.size, a.root);
  check_spec("reduce", a.algorithm);
  check_reduction("reduce", a.dtype, a.op);
  const AlgorithmSpec spec = resolve(facts(a), a.algorithm);
  Plan plan("reduce " + spec.to_string());
  plan.set_reduction(a.dtype, a.op);
  if (a.count * datatype_size(a.dtype) == 0) return plan.finish();
  kReduceAlgorithms.build(plan, a, spec);
  return plan.finish();
}

}  // namespace grove::coll
