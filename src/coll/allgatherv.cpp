#include "coll/allgatherv.hpp"

#include <fmt/format.h>

#include "coll/allgather.hpp"
#include "coll/checks.hpp"
#include "coll/layout.hpp"
#include "coll/plan.hpp"
#include "coll/ring_steps.hpp"
#include "coll/tree_steps.hpp"
#include "grove/error.hpp"

namespace grove::coll {
namespace {

[[maybe_unused]] const bool registered = [] {
  register_algorithms(
      "allgatherv", {
                        {"ring", 0, 2, 1 << 20, false,
                         "N-1 steps to the right neighbour; empty blocks skipped", ""},
                        {"gather_bcast", 0, 2, 1 << 20, false,
                         "k-ary gather to rank 0 (rollup_radix), k-ary bcast (release_radix)", ""},
                    });
  return true;
}();

constexpr size_t kRingFrom = 81920;  // MODELS.md §2

BlockLayout layout_of(const AllgathervArgs& a) {
  if (a.counts.size() != static_cast<size_t>(a.size)) {
    throw Error(Errc::invalid_argument,
                fmt::format("allgatherv  {} counts for {} ranks", a.counts.size(), a.size));
  }
  if (a.offsets.empty()) return BlockLayout::packed(a.counts);
  if (a.offsets.size() != a.counts.size()) {
    throw Error(Errc::invalid_argument,
                fmt::format("allgatherv  {} offsets for {} ranks", a.offsets.size(), a.size));
  }
  return BlockLayout{a.offsets, a.counts};
}

Region own_block(const AllgathervArgs& a, const BlockLayout& layout) {
  const auto r = static_cast<size_t>(a.rank);
  return a.in_place ? output_region(layout.offsets[r], layout.lengths[r])
                    : input_region(0, layout.lengths[r]);
}

std::optional<StepId> place_own(Plan& plan, const AllgathervArgs& a, const BlockLayout& layout) {
  if (a.in_place) return std::nullopt;
  const auto r = static_cast<size_t>(a.rank);
  return plan.copy(own_block(a, layout), output_region(layout.offsets[r], layout.lengths[r]));
}

// True when the blocks tile [0, total) in rank order.
bool tiles_in_rank_order(const BlockLayout& layout) {
  size_t next = 0;
  for (size_t i = 0; i < layout.size(); ++i) {
    if (layout.offsets[i] != next && layout.lengths[i] > 0) return false;
    next += layout.lengths[i];
  }
  return true;
}

sched::Schedule build_ring(const AllgathervArgs& a) {
  Plan plan("allgatherv ring");
  const BlockLayout layout = layout_of(a);
  if (layout.total() == 0) return plan.finish();
  place_own(plan, a, layout);
  ring_allgather(plan, a.rank, a.size, layout, 0, own_block(a, layout), 0);
  return plan.finish();
}

sched::Schedule build_gather_bcast(const AllgathervArgs& a, int rollup, int release) {
  Plan plan(fmt::format("allgatherv gather_bcast(rollup={},release={})", rollup, release));
  const BlockLayout layout = layout_of(a);
  const size_t total = layout.total();
  if (total == 0) return plan.finish();
  const topo::Tree up = topo::make_tree(topo::Shape::kary, a.size, 0, rollup);
  const topo::Tree down = topo::make_tree(topo::Shape::kary, a.size, 0, release);

  if (tiles_in_rank_order(layout)) {
    const Deps gathered = tree_gather(plan, up, a.rank, layout, own_block(a, layout), 0);
    tree_bcast(plan, down, a.rank, output_region(0, total), 1, gathered);
    return plan.finish();
  }
  // Gather into the output as laid out, then release a packed copy.
  const Deps gathered = tree_gather(plan, up, a.rank, layout, own_block(a, layout), 0);
  const BlockLayout packed = BlockLayout::packed(layout.lengths);
  const Region pack = plan.take_scratch(total);
  const Deps gathered_all{plan.join(gathered)};
  Deps ready = gathered_all;
  if (a.rank == 0) {
    Deps packing;
    for (size_t i = 0; i < layout.size(); ++i) {
      packing.add(plan.copy(output_region(layout.offsets[i], layout.lengths[i]),
                            sub_region(pack, packed.offsets[i], packed.lengths[i]), gathered_all));
    }
    ready = Deps{plan.join(packing)};
  }
  const Deps released = tree_bcast(plan, down, a.rank, pack, 1, ready);
  if (a.rank != 0) {
    // Unpack after the own block left (in place it is read from the output).
    const Deps after{plan.join(Deps(released).add(gathered_all))};
    place_own(plan, a, layout);
    for (size_t i = 0; i < layout.size(); ++i) {
      if (static_cast<int>(i) == a.rank) continue;
      plan.copy(sub_region(pack, packed.offsets[i], packed.lengths[i]),
                output_region(layout.offsets[i], layout.lengths[i]), after);
    }
  }
  return plan.finish();
}

}  // namespace

AlgorithmSpec choose_allgatherv_auto(int /*size*/, size_t total_bytes) {
  return parse_algorithm("allgatherv", total_bytes < kRingFrom ? "gather_bcast" : "ring");
}

AlgorithmSpec resolve_allgatherv(const AlgorithmSpec& spec, int size, size_t total_bytes) {
  return spec.is_auto() ? choose_allgatherv_auto(size, total_bytes) : spec;
}

std::string describe_allgatherv(const AlgorithmSpec& resolved) {
  if (resolved.name == "gather_bcast")
    return fmt::format("gather_bcast(rollup={},release={})", rollup_radix(), release_radix());
  return resolved.to_string();
}

sched::Schedule build_allgatherv(const AllgathervArgs& a) {
  check_rank("allgatherv", a.rank, a.size);
  check_spec("allgatherv", a.algorithm);
  const BlockLayout layout = layout_of(a);
  const AlgorithmSpec spec = resolve_allgatherv(a.algorithm, a.size, layout.total());
  if (spec.name == "ring") return build_ring(a);
  if (spec.name == "gather_bcast") return build_gather_bcast(a, rollup_radix(), release_radix());
  throw Error(Errc::internal, fmt::format("allgatherv: no builder for algorithm '{}'", spec.name));
}

}  // namespace grove::coll
