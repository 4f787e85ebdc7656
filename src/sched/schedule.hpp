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

struct Region {
  Buffer buffer = Buffer::output;
  size_t offset = 0;
  size_t length = 0;
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

inline constexpr uint32_t kUnlimited = std::numeric_limits<uint32_t>::max();

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
};

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
