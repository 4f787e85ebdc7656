#pragma once
// Gather, scatter and broadcast (and a barrier's fan-in and fan-out) along
// any topo::Tree, as steps added to a Plan. The collectives that move one block per rank up or down
// a tree (scatter, gather, the two phases of allgather's gather_bcast) are these three functions
// with different trees.
//
// Packing. A rank that relays exchanges its whole subtree's blocks with its
// parent in one message, packed in subtree order: the preorder walk of the
// subtree with children in increasing virtual rank. For knomial and chain
// trees that order is increasing virtual rank, so a subtree's blocks are
// contiguous in a rank-ordered buffer and the root exchanges them in place
// (unless the range wraps past the last rank); for other trees (kary) the
// root packs or unpacks through scratch with one copy per contiguous run.

#include <cstddef>
#include <vector>

#include "coll/layout.hpp"
#include "coll/plan.hpp"
#include "topo/tree.hpp"

namespace grove::coll {

// Every rank's block goes to the root's output at layout.offsets[rank].
// `own` is this rank's block (layout.lengths[rank] bytes; at the root it may
// already be the output slot, then nothing is copied). Every step follows
// `after`. Returns the steps added.
Deps tree_gather(Plan& plan, const topo::Tree& tree, int rank, const BlockLayout& layout,
                 Region own, int channel, const Deps& after = {});

// The root's `source` buffer holds rank i's block at layout.offsets[i];
// every rank receives its block into `own` (layout.lengths[rank] bytes).
Deps tree_scatter(Plan& plan, const topo::Tree& tree, int rank, const BlockLayout& layout,
                  Buffer source, Region own, int channel, const Deps& after = {});

// `region` (the same length on every rank) goes from the root to all: a
// receive from the parent, then a send to each child in the tree's serving
// order. Nothing for an empty region.
Deps tree_bcast(Plan& plan, const topo::Tree& tree, int rank, Region region, int channel,
                const Deps& after = {});

// A barrier's two halves, in empty messages. Fan-in: a receive from every
// child, then a send to the parent after all of them; returns the send (the
// root: the receives). Fan-out: tree_bcast of nothing, after `after`.
Deps tree_fan_in(Plan& plan, const topo::Tree& tree, int rank, int channel);
Deps tree_fan_out(Plan& plan, const topo::Tree& tree, int rank, int channel,
                  const Deps& after = {});

}  // namespace grove::coll
