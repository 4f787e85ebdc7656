#include "coll/tree_steps.hpp"

#include <algorithm>

namespace grove::coll {
namespace {

std::vector<int> ascending_children(const topo::Tree& tree, int rank) {
  std::vector<int> kids = topo::children(tree, rank);
  std::sort(kids.begin(), kids.end(),
            [&](int a, int b) { return topo::to_virtual(tree, a) < topo::to_virtual(tree, b); });
  return kids;
}

// The subtree of `rank` in pack order (see the header).
std::vector<int> subtree_order(const topo::Tree& tree, int rank) {
  std::vector<int> order;
  std::vector<int> stack{rank};
  while (!stack.empty()) {
    const int u = stack.back();
    stack.pop_back();
    order.push_back(u);
    const std::vector<int> kids = ascending_children(tree, u);
    stack.insert(stack.end(), kids.rbegin(), kids.rend());
  }
  return order;
}

// The packed layout of one subtree: where each member's block sits in the
// pack, and each child's piece of it.
struct Pack {
  std::vector<int> order;
  std::vector<size_t> offset;  // offset[i]: start of order[i]'s block in the pack
  size_t bytes = 0;

  struct Piece {
    int child;
    size_t first;  // index into order
    size_t count;  // members
    size_t offset;
    size_t bytes;
  };
  std::vector<Piece> pieces;  // one per child, in ascending virtual rank
};

Pack make_pack(const topo::Tree& tree, int rank, const BlockLayout& layout) {
  Pack pack;
  pack.order = subtree_order(tree, rank);
  pack.offset.resize(pack.order.size() + 1);
  for (size_t i = 0; i < pack.order.size(); ++i)
    pack.offset[i + 1] = pack.offset[i] + layout.lengths[pack.order[i]];
  pack.bytes = pack.offset.back();
  // Preorder: each child's subtree follows the previous one's.
  size_t first = 1;
  for (int child : ascending_children(tree, rank)) {
    const auto count = static_cast<size_t>(topo::subtree_size(tree, child));
    pack.pieces.push_back(Pack::Piece{child, first, count, pack.offset[first],
                                      pack.offset[first + count] - pack.offset[first]});
    first += count;
  }
  return pack;
}

// Maximal runs of a piece whose blocks are adjacent in the layout too.
struct Run {
  size_t pack_offset;
  size_t layout_offset;
  size_t bytes;
};
std::vector<Run> runs_of(const Pack& pack, const Pack::Piece& piece, const BlockLayout& layout) {
  std::vector<Run> runs;
  for (size_t i = piece.first; i < piece.first + piece.count; ++i) {
    const int member = pack.order[i];
    const size_t length = layout.lengths[member];
    if (length == 0) continue;
    if (!runs.empty() && runs.back().layout_offset + runs.back().bytes == layout.offsets[member] &&
        runs.back().pack_offset + runs.back().bytes == pack.offset[i]) {
      runs.back().bytes += length;
    } else {
      runs.push_back(Run{pack.offset[i], layout.offsets[member], length});
    }
  }
  return runs;
}

// The order a parent serves its children in: topo's (largest subtree first).
std::vector<const Pack::Piece*> serving_order(const topo::Tree& tree, int rank, const Pack& pack) {
  std::vector<const Pack::Piece*> out;
  for (int child : topo::children(tree, rank)) {
    for (const Pack::Piece& piece : pack.pieces)
      if (piece.child == child) out.push_back(&piece);
  }
  return out;
}

}  // namespace

Deps tree_gather(Plan& plan, const topo::Tree& tree, int rank, const BlockLayout& layout,
                 Region own, int channel, const Deps& after) {
  Deps added;
  const int parent = topo::parent(tree, rank);
  const std::vector<int> kids = topo::children(tree, rank);
  if (parent >= 0 && kids.empty()) {
    if (own.length > 0) added.add(plan.send(parent, channel, own, after));
    return added;
  }
  const Pack pack = make_pack(tree, rank, layout);
  if (pack.bytes == 0) return added;

  if (parent >= 0) {
    // A relay: own block and the children's packs into one pack, then up.
    const Region buffer = plan.take_scratch(pack.bytes);
    Deps ready;
    ready.add(plan.copy(own, sub_region(buffer, 0, own.length), after));
    for (const Pack::Piece& piece : pack.pieces) {
      if (piece.bytes == 0) continue;
      ready.add(plan.recv(piece.child, channel, sub_region(buffer, piece.offset, piece.bytes)));
    }
    added.add(ready);
    added.add(plan.send(parent, channel, buffer, Deps(ready).add(after)));
    return added;
  }

  // The root: each child's pack straight into the output where its blocks
  // are adjacent there, else through scratch and one copy per run.
  const Region own_slot = output_region(layout.offsets[rank], layout.lengths[rank]);
  if (!(own.buffer == own_slot.buffer && own.offset == own_slot.offset))
    added.add(plan.copy(own, own_slot, after));
  for (const Pack::Piece& piece : pack.pieces) {
    if (piece.bytes == 0) continue;
    const std::vector<Run> runs = runs_of(pack, piece, layout);
    if (runs.size() == 1) {
      added.add(plan.recv(piece.child, channel, output_region(runs[0].layout_offset, piece.bytes),
                          after));
      continue;
    }
    const Region staging = plan.take_scratch(piece.bytes);
    const StepId got = plan.recv(piece.child, channel, staging);
    added.add(got);
    for (const Run& run : runs) {
      added.add(plan.copy(sub_region(staging, run.pack_offset - piece.offset, run.bytes),
                          output_region(run.layout_offset, run.bytes), Deps(after).add(got)));
    }
  }
  return added;
}

Deps tree_scatter(Plan& plan, const topo::Tree& tree, int rank, const BlockLayout& layout,
                  Buffer source, Region own, int channel, const Deps& after) {
  Deps added;
  const int parent = topo::parent(tree, rank);
  const std::vector<int> kids = topo::children(tree, rank);
  if (parent >= 0 && kids.empty()) {
    if (own.length > 0) added.add(plan.recv(parent, channel, own, after));
    return added;
  }
  const Pack pack = make_pack(tree, rank, layout);
  if (pack.bytes == 0) return added;

  if (parent >= 0) {
    // A relay: the subtree's pack from the parent; keep the own block,
    // forward each child's piece.
    const Region buffer = plan.take_scratch(pack.bytes);
    const StepId got = plan.recv(parent, channel, buffer, after);
    added.add(got);
    added.add(plan.copy(sub_region(buffer, 0, own.length), own, {got}));
    for (const Pack::Piece* piece : serving_order(tree, rank, pack)) {
      if (piece->bytes == 0) continue;
      added.add(
          plan.send(piece->child, channel, sub_region(buffer, piece->offset, piece->bytes), {got}));
    }
    return added;
  }

  // The root: each child's pack straight from the source where its blocks
  // are adjacent there, else packed into scratch first.
  for (const Pack::Piece* piece : serving_order(tree, rank, pack)) {
    if (piece->bytes == 0) continue;
    const std::vector<Run> runs = runs_of(pack, *piece, layout);
    if (runs.size() == 1) {
      added.add(plan.send(piece->child, channel,
                          Region{source, runs[0].layout_offset, piece->bytes}, after));
      continue;
    }
    const Region staging = plan.take_scratch(piece->bytes);
    Deps packed;
    for (const Run& run : runs) {
      packed.add(plan.copy(Region{source, run.layout_offset, run.bytes},
                           sub_region(staging, run.pack_offset - piece->offset, run.bytes), after));
    }
    added.add(packed);
    added.add(plan.send(piece->child, channel, staging, packed));
  }
  const Region own_source{source, layout.offsets[rank], layout.lengths[rank]};
  if (!(own_source.buffer == own.buffer && own_source.offset == own.offset))
    added.add(plan.copy(own_source, own, after));
  return added;
}

namespace {

// Down the tree: a receive from the parent, then a send to each child in the
// tree's serving order, each after the receive (and `after`).
Deps down(Plan& plan, const topo::Tree& tree, int rank, Region region, int channel,
          const Deps& after) {
  Deps added;
  const int parent = topo::parent(tree, rank);
  Deps have = after;
  if (parent >= 0) {
    const StepId got = plan.recv(parent, channel, region, after);
    added.add(got);
    have.add(got);
  }
  for (int child : topo::children(tree, rank))
    added.add(plan.send(child, channel, region, have));
  return added;
}

}  // namespace

Deps tree_bcast(Plan& plan, const topo::Tree& tree, int rank, Region region, int channel,
                const Deps& after) {
  if (region.length == 0) return {};
  return down(plan, tree, rank, region, channel, after);
}

Deps tree_fan_in(Plan& plan, const topo::Tree& tree, int rank, int channel) {
  Deps arrived;
  for (int child : topo::children(tree, rank))
    arrived.add(plan.recv(child, channel, output_region(0, 0)));
  const int parent = topo::parent(tree, rank);
  if (parent < 0) return arrived;
  return Deps{plan.send(parent, channel, output_region(0, 0), arrived)};
}

Deps tree_fan_out(Plan& plan, const topo::Tree& tree, int rank, int channel, const Deps& after) {
  return down(plan, tree, rank, output_region(0, 0), channel, after);
}

}  // namespace grove::coll
