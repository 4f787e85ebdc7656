#include "coll/gather.hpp"

#include <fmt/format.h>

#include "coll/checks.hpp"
#include "coll/layout.hpp"
#include "coll/plan.hpp"
#include "coll/tree_steps.hpp"
#include "grove/error.hpp"

namespace grove::coll {
namespace {

[[maybe_unused]] const bool registered = [] {
  register_algorithms("gather",
                      {
                          {"flat", 0, 2, 1 << 20, false, "every rank sends to the root", ""},
                          {"binomial", 0, 2, 1 << 20, false,
                           "binomial tree, a subtree's blocks in one message", ""},
                          {"kary", 4, 2, 1 << 20, false, "k-ary heap tree (kary:K)", "kary:4"},
                      });
  return true;
}();

topo::Tree tree_of(const AlgorithmSpec& spec, int size, int root) {
  if (spec.name == "flat") return topo::make_tree(topo::Shape::flat, size, root);
  if (spec.name == "binomial") return topo::make_tree(topo::Shape::binomial, size, root);
  if (spec.name == "kary") return topo::make_tree(topo::Shape::kary, size, root, spec.radix);
  throw Error(Errc::internal, fmt::format("gather: no builder for algorithm '{}'", spec.name));
}

}  // namespace

AlgorithmSpec choose_gather_auto(int /*size*/, size_t /*block_bytes*/) {
  return parse_algorithm("gather", "binomial");
}

AlgorithmSpec resolve_gather(const AlgorithmSpec& spec, int size, size_t block_bytes) {
  return spec.is_auto() ? choose_gather_auto(size, block_bytes) : spec;
}

sched::Schedule build_gather(const GatherArgs& a) {
  check_root("gather", a.rank, a.size, a.root);
  check_spec("gather", a.algorithm);
  const AlgorithmSpec spec = resolve_gather(a.algorithm, a.size, a.block_bytes);
  Plan plan("gather " + spec.to_string());
  if (a.block_bytes == 0) return plan.finish();
  tree_gather(plan, tree_of(spec, a.size, a.root), a.rank,
              BlockLayout::uniform(a.size, a.block_bytes), input_region(0, a.block_bytes), 0);
  return plan.finish();
}

}  // namespace grove::coll
