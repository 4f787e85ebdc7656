#pragma once
// Runs one Schedule for one rank on any Transport, non-blocking.
//
// Contract (relied on by Comm, the simulator and the fence):
// - Steps are posted as soon as all their dependencies completed, in step
//   order among those ready, holding at most max_sends sends and max_recvs
//   receives in flight (counted independently).
// - The execution drives itself: a completion callback posts the steps it
//   made ready (re-entrancy guarded, so immediate completions do not
//   recurse). Callers only call Transport::progress() and check done().
// - Copy and reduce steps run inline when ready. On a transport that does
//   not carry payload (Transport::carries_payload() false: the simulator's
//   sizes-only mode) they move no bytes, buffers may be null (lengths are
//   still checked), no scratch is allocated and send/recv are handed null
//   data pointers (the transport ignores them).
// - A failed message (truncated, peer failed) marks the execution failed
//   with a grove::Error naming the step, the peer and the cause; nothing
//   further is posted.
// - Nothing posted outlives the call that posted it: abort() cancels every
//   message in flight and waits (bounded) until the transport has reported
//   each one, after which the transport touches none of the buffers. The
//   front ends (api/operation.cpp) abort on every way out of a call that
//   failed, timed out or was dropped, so a call that returns or throws has
//   completed or cancelled everything it posted. Destroying an Execution
//   with messages in flight aborts it first.
// - Only when the transport cannot end a message even by failing its peer
//   (abort() returns the count) does the internal state live on until the
//   transport completes it, so the transport never calls into freed memory;
//   the user buffers must then stay valid until it does (or the transport
//   be destroyed first).
// - A send or receive of a marked region (Mark) that is empty for this rank
//   completes when posted, without a message: both sides of a block agree
//   it is empty (bcast scatter_allgather keeps such steps so that ranks of
//   one shape share a schedule). Within in-flight limits it still waits for
//   a slot.
// - A symmetric schedule (Symmetry) built for another rank runs relabelled
//   for this one, step by step, so many ranks can share one schedule; a
//   rank it does not cover is an invalid_argument error.
// - Memory: what is derived from the schedule alone (StepGraph) is shared
//   by all its executions; per execution, one byte per step between the
//   oldest unfinished and the newest touched step (StepCells), the ready
//   steps, and nothing per message in flight (contexts are tokens:
//   ContextRegistry). abort() finds what is in flight by scanning the
//   step cells, once per call that fails.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/function_ref.hpp"
#include "grove/error.hpp"
#include "sched/schedule.hpp"
#include "transport/transport.hpp"

namespace grove::sched {

struct Buffers {
  const std::byte* input = nullptr;
  size_t input_length = 0;
  std::byte* output = nullptr;
  size_t output_length = 0;
};

class Execution {
 public:
  // `base_tag` carries context, sequence, topology and stamp; each step adds
  // its channel. Regions are checked against the buffers' lengths here.
  Execution(Transport& transport, std::shared_ptr<const Schedule> schedule, Buffers buffers,
            Tag base_tag);
  ~Execution();
  Execution(const Execution&) = delete;
  Execution& operator=(const Execution&) = delete;

  void start();
  bool done() const;  // completed or failed
  // Calls fn(context) once, at the end of the completion (or of start())
  // that makes done() true; a caller with many executions learns when each
  // ends without asking each after every completion. Not called if done()
  // is already true, nor by abort(). fn may destroy the execution.
  using DoneFn = void (*)(void* context);
  void notify_when_done(DoneFn fn, void* context);
  const std::optional<Error>& error() const;
  // Pending steps, for timeout and mismatch messages ("recv from 3 on channel 1").
  std::string describe_pending() const;
  // Stops the execution: nothing more is posted; every message in flight is
  // cancelled (Transport::cancel, CancelMode::request) and the transport
  // progressed under the wait policy until it has reported each of them,
  // at most cancel_wait_ms; any still in flight then is cancelled with
  // CancelMode::fail_peer (the last resort) and waited for as long again.
  // `departed(peer)` true: the peer is known to be gone, and its messages
  // are failed at once. error() is `cause` unless the execution had failed
  // already. Returns the number of messages still in flight (0 unless the
  // transport could not end them: their buffers are then still in use).
  size_t abort(const Error& cause, FunctionRef<bool(int peer)> departed = {});
  const Schedule& schedule() const;

  // Bytes one execution holds besides its schedule and StepGraph (shared by
  // all executions of the schedule) when at most `window` consecutive steps
  // of its `steps` are touched and its ready steps' arrays grow to
  // `ready_storage` ids in all (ReadySpill, src/sched/ready_steps.hpp: runs
  // take none): for the simulator's memory estimate.
  static size_t footprint(size_t steps, size_t window, size_t ready_storage);

  // The completion function executions hand to Transport::send and recv,
  // and a hint for a transport that knows a completion is coming (the
  // simulator, SimWorld::set_completion_prefetch): prefetches the lines of
  // the execution's state that completing `context`'s step reads first.
  // Reads only the context registry; changes nothing.
  static CompletionFn completion_fn();
  static void prefetch_completion(const void* context);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// After Transport::cancel of some messages: progresses the transport under
// the wait policy until `all_reported()` (their completions ran) or
// cancel_wait_ms passed; true when all were reported. Execution::abort and
// point-to-point messages share it.
bool await_cancelled(Transport& transport, FunctionRef<bool()> all_reported);

}  // namespace grove::sched
