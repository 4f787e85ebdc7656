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
//   still checked) and no scratch is allocated.
// - A failed message (truncated, peer failed) marks the execution failed
//   with a grove::Error naming the step, the peer and the cause; nothing
//   further is posted.
// - Destroying an Execution with messages still in flight (after a failure)
//   is allowed: its internal state lives on until the transport completes
//   them, so the transport never calls into freed memory. The user buffers
//   must stay valid until then (or the transport be destroyed first).

#include <memory>
#include <optional>
#include <string>
#include <vector>

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
  const std::optional<Error>& error() const;
  // Pending steps, for timeout and mismatch messages ("recv from 3 on channel 1").
  std::string describe_pending() const;
  const Schedule& schedule() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace grove::sched
