#include "coll/reduce.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "coll/checks.hpp"
#include "coll/halving_steps.hpp"
#include "coll/plan.hpp"
#include "grove/error.hpp"
#include "topo/tree.hpp"

namespace grove::coll {
namespace {

[[maybe_unused]] const bool registered = [] {
  register_algorithms("reduce",
                      {
                          {"binomial", 0, 2, 1 << 20, false, "binomial tree to the root", ""},
                          {"rabenseifner", 0, 2, 1 << 20, false,
                           "reduce-scatter by recursive halving, then binomial gather", ""},
                      });
  return true;
}();

// MODELS.md §2: binomial if n <= 2048 B or count < pof2.
constexpr size_t kShortBytes = 2048;

// The root's contribution and where every rank accumulates.
struct Start {
  Region mine;
  Region acc;
  Deps ready;  // acc holds this rank's contribution after these
};

Start start(Plan& plan, const ReduceArgs& a, size_t bytes, bool needs_acc) {
  Start s;
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

void build_binomial(Plan& plan, const ReduceArgs& a, size_t bytes) {
  const topo::Tree tree = topo::make_tree(topo::Shape::binomial, a.size, a.root);
  std::vector<int> kids = topo::children(tree, a.rank);
  // Nearest child (smallest subtree, ready first) first.
  std::sort(kids.begin(), kids.end(),
            [&](int x, int y) { return topo::to_virtual(tree, x) < topo::to_virtual(tree, y); });
  const int parent = topo::parent(tree, a.rank);
  const Start s = start(plan, a, bytes, !kids.empty());
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

void build_rabenseifner(Plan& plan, const ReduceArgs& a, size_t bytes) {
  const Fold fold(a.size);
  const Ranks ranks{a.root, a.size};
  const int relative = ranks.relative(a.rank);
  if (fold.sits_out(relative)) {
    fold_in(plan, fold, ranks, relative, input_region(0, bytes), {}, {}, 0, {});
    return;
  }
  const Start s = start(plan, a, bytes, true);
  const Region incoming = plan.take_scratch(bytes);
  const Phase folded = fold_in(plan, fold, ranks, relative, s.mine, s.acc, incoming, 0, s.ready);
  const int v = fold.virtual_of(relative);
  const BlockLayout chunks = BlockLayout::split(a.count, datatype_size(a.dtype), fold.p2);
  const Phase halved = recursive_halving(plan, fold, ranks, v, chunks, s.acc, incoming, 1,
                                         Deps(s.ready).add(folded.done));
  binomial_gather(plan, fold, ranks, v, chunks, s.acc, 1 + fold.steps, halved.done, halved.sends);
}

}  // namespace

AlgorithmSpec choose_reduce_auto(int size, size_t count, Datatype dtype) {
  const Fold fold(size);
  if (count * datatype_size(dtype) <= kShortBytes || count < static_cast<size_t>(fold.p2))
    return parse_algorithm("reduce", "binomial");
  return parse_algorithm("reduce", "rabenseifner");
}

AlgorithmSpec resolve_reduce(const AlgorithmSpec& spec, int size, size_t count, Datatype dtype) {
  return spec.is_auto() ? choose_reduce_auto(size, count, dtype) : spec;
}

sched::Schedule build_reduce(const ReduceArgs& a) {
  check_root("reduce", a.rank, a.size, a.root);
  check_spec("reduce", a.algorithm);
  check_reduction("reduce", a.dtype, a.op);
  const AlgorithmSpec spec = resolve_reduce(a.algorithm, a.size, a.count, a.dtype);
  Plan plan("reduce " + spec.to_string());
  plan.set_reduction(a.dtype, a.op);
  const size_t bytes = a.count * datatype_size(a.dtype);
  if (bytes == 0) return plan.finish();
  if (spec.name == "binomial") {
    build_binomial(plan, a, bytes);
  } else if (spec.name == "rabenseifner") {
    build_rabenseifner(plan, a, bytes);
  } else {
    throw Error(Errc::internal, fmt::format("reduce: no builder for algorithm '{}'", spec.name));
  }
  return plan.finish();
}

}  // namespace grove::coll
