#include "coll/allgatherv.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "coll/allgather.hpp"
#include "coll/checks.hpp"
#include "coll/layout.hpp"
#include "coll/registry.hpp"
#include "coll/ring_steps.hpp"
#include "coll/tree_steps.hpp"
#include "grove/error.hpp"

namespace grove::coll {
namespace {

BlockLayout layout_v(const AllgathervArgs& a) {
  if (a.counts.size() != static_cast<size_t>(a.size)) {
    throw Error(Errc::invalid_argument,
                fmt::format("allgatherv: {} counts for {} ranks", a.counts.size(), a.size));
  }
  if (a.offsets.empty()) return BlockLayout::packed(a.counts);
  if (a.offsets.size() != a.counts.size()) {
    throw Error(Errc::invalid_argument,
                fmt::format("allgatherv: {} offsets for {} ranks", a.offsets.size(), a.size));
  }
  return BlockLayout{a.offsets, a.counts};
}

// Marked (they move with the rank): the own block in the output, and in
// the input as long as the own block.
Region own_block_v(const AllgathervArgs& a, const BlockLayout& layout) {
  const Region slot = block_region(Buffer::output, layout, static_cast<size_t>(a.rank));
  return a.in_place ? slot : sized_like(input_region(0, 0), slot);
}

std::optional<StepId> place_own_v(Plan& plan, const AllgathervArgs& a, const BlockLayout& layout) {
  if (a.in_place) return std::nullopt;
  return plan.copy(own_block_v(a, layout),
                   block_region(Buffer::output, layout, static_cast<size_t>(a.rank)));
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

void ring_v(Plan& plan, const AllgathervArgs& a, const AlgorithmSpec&) {
  const BlockLayout layout = layout_v(a);
  if (layout.total() == 0) return;
  // With no empty block every rank runs the same steps, one block further
  // along (an empty block is skipped, which depends on the rank).
  if (std::find(layout.lengths.begin(), layout.lengths.end(), 0) == layout.lengths.end())
    plan.set_symmetry(a.rank, a.size, 1, layout);
  place_own_v(plan, a, layout);
  ring_allgather(plan, a.rank, a.size, layout, 0, own_block_v(a, layout), 0);
}

void gather_bcast_v(Plan& plan, const AllgathervArgs& a, const AlgorithmSpec&) {
  const int rollup = rollup_radix();
  const int release = release_radix();
  const BlockLayout layout = layout_v(a);
  const size_t total = layout.total();
  if (total == 0) return;
  const topo::Tree up = topo::make_tree(topo::Shape::kary, a.size, 0, rollup);
  const topo::Tree down = topo::make_tree(topo::Shape::kary, a.size, 0, release);

  if (tiles_in_rank_order(layout)) {
    const Deps gathered = tree_gather(plan, up, a.rank, layout, own_block_v(a, layout), 0);
    tree_bcast(plan, down, a.rank, output_region(0, total), 1, gathered);
    return;
  }
  // Gather into the output as laid out, then release a packed copy.
  const Deps gathered = tree_gather(plan, up, a.rank, layout, own_block_v(a, layout), 0);
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
    place_own_v(plan, a, layout);
    for (size_t i = 0; i < layout.size(); ++i) {
      if (static_cast<int>(i) == a.rank) continue;
      plan.copy(sub_region(pack, packed.offsets[i], packed.lengths[i]),
                output_region(layout.offsets[i], layout.lengths[i]), after);
    }
  }
}

// m is the largest block.
const AlgorithmTable<AllgathervArgs> kAllgathervAlgorithms{
    Collective::allgatherv,
    {
        {{.name = "ring",
          .doc = "N-1 steps to the right neighbour; empty blocks skipped",
          .cost = closed_form("(P-1) (u(largest block) + L)", "as allgather ring", cost::never,
                              0.05, false,
                              [](const CostCase& c, const PortModel& m) {
                                return (c.ranks - 1) * (m.u(c.bytes) + m.l(c.bytes));
                              })},
         &ring_v},
        {{.name = "gather_bcast",
          .doc = "k-ary gather to rank 0 (rollup_radix), k-ary bcast (release_radix)",
          .cost = closed_form(
              "as allgather gather_bcast with the largest block", "none", cost::never, 4.0, false,
              [](const CostCase& c, const PortModel& m) {
                return cost::kary_gather(c.ranks, rollup_radix(), c.bytes, m) +
                       cost::kary_bcast(c.ranks, release_radix(), c.ranks * c.bytes, m);
              })},
         &gather_bcast_v},
    }};

}  // namespace

CallFacts facts(const AllgathervArgs& a) {
  uint64_t total = 0;
  for (size_t count : a.counts)
    total += count;
  return CallFacts{.collective = Collective::allgatherv,
                   .ranks = a.size,
                   .bytes = a.size > 0 ? total / static_cast<uint64_t>(a.size) : 0,
                   .total = total,
                   .count = total};
}

std::string describe_allgatherv(const AlgorithmSpec& resolved) {
  if (resolved.name == "gather_bcast")
    return fmt::format("gather_bcast(rollup={},release={})", rollup_radix(), release_radix());
  return resolved.to_string();
}

sched::Schedule build_allgatherv(const AllgathervArgs& a) {
  check_rank("allgatherv", a.rank, a.size);
  check_spec("allgatherv", a.algorithm);
  const BlockLayout layout = layout_v(a);
  const AlgorithmSpec spec = resolve(facts(a), a.algorithm);
  Plan plan("allgatherv " + describe_allgatherv(spec));
  if (layout.total() == 0) return plan.finish();
  kAllgathervAlgorithms.build(plan, a, spec);
  return plan.finish();
}

}  // namespace grove::coll
