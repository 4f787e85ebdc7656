#pragma once
// The ring allgather as steps, shared by allgather, allgatherv and the
// second phase of the ring allreduce.

#include "coll/layout.hpp"
#include "coll/plan.hpp"

namespace grove::coll {

// Rank r starts with block (r + shift) mod N at `own` and ends with every
// block at its `layout` position in the output. At step s (0 .. N-2) rank r
// sends block (r - s + shift) to r + 1 and receives block (r - s - 1 +
// shift) from r - 1, on channel channel_base + s; a block is forwarded as
// soon as it arrived. Empty blocks are never sent. Every step follows
// `after`. The caller places the own block in the output. Returns the steps
// added. Output blocks are block_regions of `layout`, so a caller whose
// other regions are too may declare the schedule symmetric.
Deps ring_allgather(Plan& plan, int rank, int size, const BlockLayout& layout, int shift,
                    Region own, int channel_base, const Deps& after = {});

}  // namespace grove::coll
