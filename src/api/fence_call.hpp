#pragma once
// The front end of the reliable fence (src/runtime/fence_engine.hpp):
// Comm::fence / ifence and FenceRequest, and the session's finalize.

#include <cstdint>
#include <memory>
#include <vector>

#include "api/comm_state.hpp"
#include "bootstrap/bootstrap.hpp"
#include "grove/comm.hpp"

namespace grove::runtime {
class FenceEngine;
}

namespace grove::detail {

// One fence call on one rank.
struct FenceCall {
  std::shared_ptr<CommState> comm;
  std::shared_ptr<runtime::FenceEngine> engine;
  uint64_t generation = 0;
  bool done = false;
  std::vector<Blob> blobs;
  std::vector<int> departed;

  // One round of progress; true once this rank holds the result. Throws
  // grove::Error (peers configured differently, a malformed message).
  bool step();
  // Blocks until done (wait_policy, timeout_ms).
  void wait();
  // A request dropped before completion: the engine need not keep its result.
  ~FenceCall();
};

// Feeds the session's failure notices to a world communicator's fence,
// progresses it and runs its timers (held forwards).
void progress_fence(CommState& comm);

// The session's finalize when the world communicator has used the fence:
// one more fence (a barrier that tolerates departed ranks), then wait,
// bounded by timeout_ms, until this rank owes no other rank a replay or an
// ack. Errors are printed, not thrown (it runs in ~Session).
void finalize_with_fence(Comm& world);

}  // namespace grove::detail
