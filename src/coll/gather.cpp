#include "coll/gather.hpp"

#include <fmt/format.h>

#include <string>

#include "coll/layout.hpp"
#include "coll/plan.hpp"
#include "coll/tree_steps.hpp"

namespace grove::coll {
namespace {

sched::Schedule gather_over(const GatherArgs& a, const topo::Tree& tree, std::string name) {
  Plan plan("gather:" + name);
  if (a.block_bytes == 0) return plan.finish();
  tree_gather(plan, tree, a.rank, BlockLayout::uniform(a.size, a.block_bytes),
              input_region(0, a.block_bytes), 0);
  return plan.finish();
}

}  // namespace

sched::Schedule gather_flat(const GatherArgs& a) {
  return gather_over(a, topo::make_tree(topo::Shape::flat, a.size, a.root), "flat");
}
sched::Schedule gather_binomial(const GatherArgs& a) {
  return gather_over(a, topo::make_tree(topo::Shape::binomial, a.size, a.root), "binomial");
}
sched::Schedule gather_kary(const GatherArgs& a, int radix) {
  return gather_over(a, topo::make_tree(topo::Shape::kary, a.size, a.root, radix),
                     fmt::format("kary:{}", radix));
}

}  // namespace grove::coll
