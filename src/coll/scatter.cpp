#include "coll/scatter.hpp"

#include <fmt/format.h>

#include "coll/checks.hpp"
#include "coll/layout.hpp"
#include "coll/plan.hpp"
#include "coll/tree_steps.hpp"
#include "grove/error.hpp"

namespace grove::coll {
namespace {

[[maybe_unused]] const bool registered = [] {
  register_algorithms(
      "scatter",
      {
          {"flat", 0, 2, 1 << 20, false, "the root sends every block directly", ""},
          {"binomial", 0, 2, 1 << 20, false,
           "binomial tree, a subtree's blocks in one message (seed 001)", ""},
          {"chain", 0, 2, 1 << 20, false, "each rank keeps its block and forwards the rest", ""},
      });
  return true;
}();

topo::Shape shape_of(const std::string& name) {
  if (name == "flat") return topo::Shape::flat;
  if (name == "binomial") return topo::Shape::binomial;
  if (name == "chain") return topo::Shape::chain;
  throw Error(Errc::internal, fmt::format("scatter: no builder for algorithm '{}'", name));
}

}  // namespace

// Open MPI's fixed rule (coll/tuned): the binomial tree only for more than
// 10 ranks and blocks under 300 B, where its fewer messages pay; otherwise
// the root sends every block itself. Measured here at 8 ranks on 2 cores
// (`grove bench --coll scatter --algo all`, 2026-11-29): flat 35 / 80 / 416
// us against binomial 69 / 256 / 1045 us for 64 KiB / 256 KiB / 1 MiB
// blocks; the binomial tree moves each block up to log2 N times.
AlgorithmSpec choose_scatter_auto(int size, size_t block_bytes) {
  const bool binomial = size > 10 && block_bytes < 300;
  return parse_algorithm("scatter", binomial ? "binomial" : "flat");
}

AlgorithmSpec resolve_scatter(const AlgorithmSpec& spec, int size, size_t block_bytes) {
  return spec.is_auto() ? choose_scatter_auto(size, block_bytes) : spec;
}

sched::Schedule build_scatter(const ScatterArgs& a) {
  check_root("scatter", a.rank, a.size, a.root);
  check_spec("scatter", a.algorithm);
  const AlgorithmSpec spec = resolve_scatter(a.algorithm, a.size, a.block_bytes);
  Plan plan("scatter " + spec.to_string());
  if (a.block_bytes == 0) return plan.finish();
  const topo::Tree tree = topo::make_tree(shape_of(spec.name), a.size, a.root);
  tree_scatter(plan, tree, a.rank, BlockLayout::uniform(a.size, a.block_bytes), Buffer::input,
               output_region(0, a.block_bytes), 0);
  return plan.finish();
}

}  // namespace grove::coll
