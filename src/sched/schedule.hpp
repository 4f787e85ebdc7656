#pragma once
// A schedule: what one rank does in one collective, as a small DAG of steps
// over byte ranges of three buffers. Algorithms build schedules; they never
// send anything themselves. A schedule holds no pointers, so it can be cached
// and replayed with other buffers (persistent collectives), run on any
// Transport, simulated, and drawn.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "grove/types.hpp"

namespace grove::sched {

enum class Buffer : uint8_t {
  input,    // the user's send buffer (read only)
  output,   // the user's receive buffer (in-place collectives use only this)
  scratch,  // executor-owned, Schedule::scratch_bytes long
};

// How a region of a symmetric schedule (see Symmetry) moves when the
// schedule is relabelled for another rank.
enum class Mark : uint8_t {
  none,    // the same bytes for every rank
  block,   // blocks [block, block + span) of the layout, `offset -
           // layout.offsets[block]` bytes into its buffer: for rank r + d
           // they are the span starting at block (block + d) mod size
  length,  // at a fixed offset, as long as block `block` of the layout
};

struct Region {
  Buffer buffer = Buffer::output;
  Mark mark = Mark::none;  // the marks fill the padding: a Region stays 24 bytes
  uint16_t span = 1;       // with Mark::block: consecutive blocks (never wrapping)
  uint32_t block = 0;      // with mark != none
  size_t offset = 0;
  size_t length = 0;

  constexpr Region() = default;
  constexpr Region(Buffer b, size_t offset_, size_t length_)
      : buffer(b), offset(offset_), length(length_) {}
};

enum class Kind : uint8_t {
  send,    // src -> peer, on channel
  recv,    // peer -> dst, on channel; the message must be exactly dst.length
  copy,    // src -> dst, local
  reduce,  // dst[i] = op(dst[i], src[i]) over dst.length bytes of `dtype`
};

using StepId = uint32_t;

struct Step {
  Kind kind = Kind::copy;
  int32_t peer = -1;        // send, recv
  uint8_t channel = 0;      // send, recv: tag channel (see transport/tag.hpp)
  Region src;               // send, copy, reduce
  Region dst;               // recv, copy, reduce
  uint32_t deps_begin = 0;  // this step's dependencies: deps[deps_begin, deps_end)
  uint32_t deps_end = 0;
};

static_assert(sizeof(Region) == 24 && sizeof(Step) == 72,
              "schedules are held per rank: keep them small");

inline constexpr uint32_t kUnlimited = std::numeric_limits<uint32_t>::max();

// A schedule that is also the schedule of other ranks, relabelled: for rank
// built_for + d (d a multiple of `period`, mod size) every peer p becomes
// (p + d) mod size and every marked region moves d blocks along `offsets` /
// `lengths` (see Mark); everything else (kinds, channels, dependencies,
// limits, unmarked regions) is the same. The builder declares it
// (coll::Plan::set_symmetry) only where it holds for the same arguments
// (tests/unit/coll/symmetry_test.cpp builds every rank and compares), so
// the simulator can build one schedule for many ranks and expand it step by
// step (relabel_step) instead of holding one per rank.
//
// With `rank_layouts` the layouts are the built-for rank's own (alltoallv's
// counts: another rank's may differ) and the steps depend on the rank only
// through the relabelling and through which of its blocks are empty. The
// schedule then stands for rank built_for + d only when that rank's layouts
// equal these and its empty blocks lie d blocks further along (mod size)
// than these: the executor cannot see another rank's layouts, so whoever
// hands the schedule to another rank checks that (model::SimSchedules).
//
// With a nonzero `shape` the schedule stands only for the ranks whose own
// schedule has the same shape (its builder's summary of what the steps
// depend on: coll::bcast_shape), under any shift; whoever hands it to
// another rank checks that the same way.
struct Symmetry {
  int built_for = -1;  // the rank it was built for; < 0: no symmetry declared
  int size = 0;
  int period = 0;
  std::vector<size_t> offsets;  // the block layout marks refer to: `size` blocks
  std::vector<size_t> lengths;
  // When not empty: the layout of marks on the output buffer (marks on the
  // input and scratch keep `offsets` and `lengths`).
  std::vector<size_t> output_offsets;
  std::vector<size_t> output_lengths;
  bool rank_layouts = false;
  uint64_t shape = 0;

  bool declared() const { return built_for >= 0; }
  // The shift d of `rank` in [0, size), or -1 when `rank` is not in this
  // schedule's class.
  int shift_of(int rank) const;
  // The layout marks on `buffer` refer to.
  const std::vector<size_t>& offsets_of(Buffer buffer) const {
    return buffer == Buffer::output && !output_lengths.empty() ? output_offsets : offsets;
  }
  const std::vector<size_t>& lengths_of(Buffer buffer) const {
    return buffer == Buffer::output && !output_lengths.empty() ? output_lengths : lengths;
  }
};

struct Schedule {
  std::vector<Step> steps;
  std::vector<StepId> deps;  // flattened dependency lists, see Step
  size_t scratch_bytes = 0;
  // Bounds on messages in flight, sends and receives counted separately.
  uint32_t max_sends = kUnlimited;
  uint32_t max_recvs = kUnlimited;
  // The element type and operation of reduce steps.
  Datatype dtype = Datatype::uint8;
  ReduceOp op = ReduceOp::sum;
  std::string algorithm;  // e.g. "knomial:4", for explain and errors
  Symmetry symmetry;
};

// `step` of `schedule` as rank built_for + shift runs it (see Symmetry);
// shift 0 returns it unchanged. Marks stay, with their blocks moved, so the
// result equals what the builder gives that rank. Throws grove::Error
// (invalid_argument) for a mark whose block is outside the layout.
Step relabel_step(const Schedule& schedule, const Step& step, int shift);
// The same for one region (the executor's hot path relabels only what it uses).
Region relabel_region(const Schedule& schedule, const Region& region, int shift);

// "send to 3 on channel 1, 4096 bytes", for errors and pending lists.
std::string describe_step(const Step& step);

// Empty when `own` (a rank's own schedule) equals `shared` relabelled by
// `shift`, step for step; else the first difference, for an error message.
std::string relabel_mismatch(const Schedule& shared, int shift, const Schedule& own);

// Appends steps in order; a step may depend only on steps added before it,
// so a schedule is acyclic by construction.
class Builder {
 public:
  StepId send(int peer, Region src, std::initializer_list<StepId> after = {}, uint8_t channel = 0);
  StepId recv(int peer, Region dst, std::initializer_list<StepId> after = {}, uint8_t channel = 0);
  StepId copy(Region src, Region dst, std::initializer_list<StepId> after = {});
  StepId reduce(Region src, Region dst, std::initializer_list<StepId> after = {});
  // Same, with dependencies from a vector.
  StepId add(Step step, const std::vector<StepId>& after);

  Schedule& schedule() { return schedule_; }
  Schedule finish() { return std::move(schedule_); }

 private:
  Schedule schedule_;
};

}  // namespace grove::sched
