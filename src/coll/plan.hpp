#pragma once
// Plan: the schedule builder the collectives in src/coll use, on top of
// sched::Builder. It adds what every algorithm needs and none should
// re-derive:
//
// - Stream order. Messages are matched by (source, tag) in posting order, so
//   on one stream -- one (peer, channel, direction) -- the k-th send of one
//   rank must meet the k-th receive of the other. The executor posts ready
//   steps lowest id first, so a message added after another on the same
//   stream is posted after it whenever it cannot become ready earlier; when
//   it could (the earlier message waits on something the later one does
//   not), Plan makes the later message depend on the earlier one. Algorithms
//   add each stream's messages in the same logical order on both ends.
// - Channels. A channel is 6 bits of the tag (transport/tag.hpp); channel
//   numbers given to Plan are taken modulo 64, and the stream order above
//   keeps reused channels correct.
// - Scratch. take_scratch() hands out disjoint scratch ranges.
// - Zero lengths. copy/reduce steps of zero bytes are not added (they return
//   nullopt); messages are added as asked (algorithms skip empty messages
//   themselves, identically on both ends).

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "coll/layout.hpp"
#include "sched/schedule.hpp"

namespace grove::coll {

using sched::Buffer;
using sched::Mark;
using sched::Region;
using sched::StepId;

inline constexpr int kChannels = 64;

inline Region input_region(size_t offset, size_t length) {
  return Region{Buffer::input, offset, length};
}
inline Region output_region(size_t offset, size_t length) {
  return Region{Buffer::output, offset, length};
}
inline Region scratch_region(size_t offset, size_t length) {
  return Region{Buffer::scratch, offset, length};
}
// A sub-range of `r`, `offset` bytes in. `r` must not be marked (a part
// of a block has no place in a relabelled schedule): throws grove::Error.
Region sub_region(const Region& r, size_t offset, size_t length);

// Block `i` of `layout` in `buffer`, starting `base` bytes in, marked so a
// relabelled schedule (sched::Symmetry) finds the same block of another rank.
Region block_region(Buffer buffer, const BlockLayout& layout, size_t i, size_t base = 0);
// Blocks [first, first + count) of a packed `layout`, marked the same way;
// the span must not wrap around the layout for any rank.
Region block_span(Buffer buffer, const BlockLayout& layout, size_t first, size_t count);
// The first block.length bytes of `where`, marked to follow `block` (a
// block_region) when relabelled: a receive buffer sized like a block.
Region sized_like(const Region& where, const Region& block);

// Dependencies: an ordered list of step ids; optional ids (steps that were
// not added) are skipped.
class Deps {
 public:
  Deps() = default;
  Deps(std::initializer_list<StepId> ids) : ids_(ids) {}
  Deps& add(StepId id) {
    ids_.push_back(id);
    return *this;
  }
  Deps& add(std::optional<StepId> id) {
    if (id) ids_.push_back(*id);
    return *this;
  }
  Deps& add(const Deps& other) {
    ids_.insert(ids_.end(), other.ids_.begin(), other.ids_.end());
    return *this;
  }
  const std::vector<StepId>& ids() const { return ids_; }
  bool empty() const { return ids_.empty(); }

 private:
  std::vector<StepId> ids_;
};

class Plan {
 public:
  explicit Plan(std::string algorithm);

  StepId send(int peer, int channel, Region src, const Deps& after = {});
  StepId recv(int peer, int channel, Region dst, const Deps& after = {});
  std::optional<StepId> copy(Region src, Region dst, const Deps& after = {});
  // dst = op(dst, src), dst the left operand (sched/reduce.hpp).
  std::optional<StepId> reduce(Region src, Region dst, const Deps& after = {});

  // A step that completes once all of `after` did (an empty copy): later
  // steps depend on it alone, so a wide dependency list is stored once,
  // not once per dependent step.
  StepId join(const Deps& after);

  // Reserves `bytes` of scratch and returns its region.
  Region take_scratch(size_t bytes);

  void set_reduction(Datatype type, ReduceOp op);
  // Bounds on messages in flight (sends and receives separately).
  void set_limits(uint32_t max_sends, uint32_t max_recvs);
  // Declares the schedule symmetric (sched::Symmetry): built for `rank` of
  // `size`, it is also the schedule of every rank r = rank + k * period
  // (mod size) given the same arguments, relabelled with `layout` (`size`
  // blocks). Only for builders whose every rank-dependent region is a
  // block_region / sized_like of `layout`, and whose steps do not depend on
  // the rank otherwise (no block skipped for being empty, for one).
  void set_symmetry(int rank, int size, int period, const BlockLayout& layout);
  // The same for a builder whose layouts are its rank's own (alltoallv's
  // counts; sched::Symmetry::rank_layouts): marks on the input refer to
  // `input`, on the output to `output`, and the schedule stands for another
  // rank only where that rank's layouts equal these and its empty blocks
  // fall at the same places relative to it. Its steps may skip empty blocks.
  void set_rank_layout_symmetry(int rank, int size, const BlockLayout& input,
                                const BlockLayout& output);
  // Period 1 with `layout`, standing only for ranks of the same `shape`
  // (nonzero; sched::Symmetry::shape).
  void set_shape_symmetry(int rank, int size, const BlockLayout& layout, uint64_t shape);

  size_t step_count() { return builder_.schedule().steps.size(); }
  // Every step added so far, for a phase that must follow all of them.
  Deps all_steps();
  sched::Schedule finish();

 private:
  StepId message(sched::Kind kind, int peer, int channel, Region region, const Deps& after);

  struct StreamTail {
    StepId step;
    std::vector<StepId> deps;  // the dependencies it was added with
  };
  sched::Builder builder_;
  std::map<std::tuple<int, int, bool>, StreamTail> tails_;
};

}  // namespace grove::coll
