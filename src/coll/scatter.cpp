#include "coll/scatter.hpp"

#include <string>

#include "coll/layout.hpp"
#include "coll/plan.hpp"
#include "coll/tree_steps.hpp"

namespace grove::coll {
namespace {

sched::Schedule scatter_over(const ScatterArgs& a, topo::Shape shape, std::string name) {
  Plan plan("scatter:" + name);
  if (a.block_bytes == 0) return plan.finish();
  const topo::Tree tree = topo::make_tree(shape, a.size, a.root);
  tree_scatter(plan, tree, a.rank, BlockLayout::uniform(a.size, a.block_bytes), Buffer::input,
               output_region(0, a.block_bytes), 0);
  return plan.finish();
}

}  // namespace

sched::Schedule scatter_flat(const ScatterArgs& a) {
  return scatter_over(a, topo::Shape::flat, "flat");
}
sched::Schedule scatter_binomial(const ScatterArgs& a) {
  return scatter_over(a, topo::Shape::binomial, "binomial");
}
sched::Schedule scatter_chain(const ScatterArgs& a) {
  return scatter_over(a, topo::Shape::chain, "chain");
}

}  // namespace grove::coll
