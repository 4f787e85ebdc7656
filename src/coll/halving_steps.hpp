#pragma once
// The building blocks of the power-of-two reduction algorithms (Thakur,
// Rabenseifner & Gropp 2005), as steps added to a Plan: the fold that
// handles non-powers of two (coll/layout.hpp, Fold), reduce-scatter by
// recursive halving, and the two ways back: allgather by recursive doubling
// and a binomial gather to virtual rank 0.
//
// Order of operands. Every reduce step computes acc = acc ⊕ incoming with
// the local partial on the left. Since x ⊕ y == y ⊕ x exactly for sum,
// prod, min and max on IEEE floats (bar the sign of a zero min/max), what
// fixes a floating-point result is only the grouping, documented per
// function; every rank that ends with a chunk gets the same bits.

#include <optional>

#include "coll/layout.hpp"
#include "coll/plan.hpp"

namespace grove::coll {

// Ranks relative to a root: relative rank q is real rank (q + root) mod size.
struct Ranks {
  int root = 0;
  int size = 1;
  int real(int relative) const { return (relative + root) % size; }
  int relative(int real_rank) const { return (real_rank - root + size) % size; }
};

struct Phase {
  Deps all;    // every step added
  Deps sends;  // the sends (their source must not change until they complete)
  Deps done;   // what a later phase must wait for to read the result
};

// Fold in. A rank that sits out sends `mine` (the whole vector) to its even
// partner; an absorbing rank receives it into `incoming` and reduces
// acc = acc ⊕ partner, so virtual rank v < rem starts from x(2v) ⊕ x(2v+1).
// `after` must cover acc's initial value.
Phase fold_in(Plan& plan, const Fold& fold, const Ranks& ranks, int relative, Region mine,
              Region acc, Region incoming, int channel, const Deps& after);

// Reduce-scatter among the fold's p2 participants. `chunks` divides acc
// (and `incoming`, laid out alike) into p2 chunks. Step t (mask = p2/2^(t+1))
// pairs virtual ranks v and v ^ mask: each sends the half of its current
// chunk range it gives up and reduces the partner's partial of the half it
// keeps (the upper half if v has the mask bit), on channel channel_base + t.
// Afterwards virtual rank v's acc chunk v holds the reduction over every
// rank, grouped as S_t(v) = S_{t-1}(v) ⊕ S_{t-1}(v ^ mask) with the highest
// mask first, from the fold's leaves.
Phase recursive_halving(Plan& plan, const Fold& fold, const Ranks& ranks, int v,
                        const BlockLayout& chunks, Region acc, Region incoming, int channel_base,
                        const Deps& after);

// Allgather of the chunks: v starts with chunk v (ready after `have`);
// step t exchanges the aligned group of 2^t chunks holding v with v ^ 2^t.
// Receives write acc, so they follow `overwrite_after` (e.g. the halving's
// sends).
Phase doubling_allgather(Plan& plan, const Fold& fold, const Ranks& ranks, int v,
                         const BlockLayout& chunks, Region acc, int channel_base, const Deps& have,
                         const Deps& overwrite_after);

// Binomial gather of the chunks to virtual rank 0: v receives chunks
// [v + 2^t, v + 2^(t+1)) from v + 2^t while v has bit t clear, then sends
// [v, v + 2^t) to v - 2^t.
Phase binomial_gather(Plan& plan, const Fold& fold, const Ranks& ranks, int v,
                      const BlockLayout& chunks, Region acc, int channel_base, const Deps& have,
                      const Deps& overwrite_after);

// Fold out: an absorbing rank sends `result` to its odd partner, which
// receives it into `into` (after `into_after`).
Phase fold_out(Plan& plan, const Fold& fold, const Ranks& ranks, int relative, Region result,
               Region into, int channel, const Deps& have, const Deps& into_after);

}  // namespace grove::coll
