#include "coll/ring_steps.hpp"

#include <optional>
#include <vector>

namespace grove::coll {

Deps ring_allgather(Plan& plan, int rank, int size, const BlockLayout& layout, int shift,
                    Region own, int channel_base, const Deps& after) {
  Deps added;
  const int right = (rank + 1) % size;
  const int left = (rank + size - 1) % size;
  auto block = [&](int i) { return static_cast<size_t>(((i % size) + size) % size); };
  std::optional<StepId> arrived;  // the block received in the previous step
  for (int s = 0; s + 1 < size; ++s) {
    const size_t out_block = block(rank - s + shift);
    const size_t in_block = block(rank - s - 1 + shift);
    std::optional<StepId> got;
    if (layout.lengths[in_block] > 0) {
      got =
          plan.recv(left, channel_base + s, block_region(Buffer::output, layout, in_block), after);
      added.add(*got);
    }
    if (layout.lengths[out_block] > 0) {
      const Region src = s == 0 ? own : block_region(Buffer::output, layout, out_block);
      added.add(plan.send(right, channel_base + s, src, Deps(after).add(arrived)));
    }
    arrived = got;
  }
  return added;
}

}  // namespace grove::coll
