#pragma once
// The Transport interface: everything above this layer (schedules, the
// fence, RMA) talks to peers only through it, so the UCX backend and the
// simulator run the same code.
//
// Semantics every backend provides:
// - Tagged point-to-point messages are matched by (source, tag) exactly, in
//   the order they were sent between one pair of ranks (non-overtaking).
// - send/recv are non-blocking. `done` is called exactly once, from inside
//   progress() or from inside the posting call itself (immediate completion).
//   The buffer must stay valid until then.
// - A message longer than the posted receive completes the receive with
//   Errc::truncated; a receive from a departed peer completes with
//   Errc::peer_failed. Completions never throw.
// - Active messages (am_send) are copied at the call, delivered in order per
//   pair to the handler registered for their id, from inside progress().
// - cancel() stops a posted send or receive (see there); its completion
//   still runs exactly once, so a caller that waits for every completion
//   knows when the transport has let go of every buffer it was given.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "grove/error.hpp"
#include "transport/tag.hpp"

namespace grove {

struct Status {
  bool ok = true;
  Errc code = Errc::internal;  // meaningful when !ok
  size_t length = 0;           // bytes received (recv) or sent (send)
};

// Completion callback: a plain function and a context pointer, so posting a
// message allocates nothing.
using CompletionFn = void (*)(void* context, const Status& status);

using AmHandler = std::function<void(int source, std::span<const std::byte> payload)>;

enum class CancelMode : uint8_t {
  // Stop the operation if the backend still can (a receive that no message
  // matched yet always can be); otherwise it completes as it would have.
  request,
  // The last resort for an operation that a request did not stop in time
  // (with UCX: a rendezvous under way, or a send its receiver never takes):
  // the backend gives up on the connection to the peer as if the peer had
  // failed, which ends every operation with it (Errc::peer_failed) and
  // fails every later one at once.
  fail_peer,
};

class Transport {
 public:
  virtual ~Transport() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string name() const = 0;  // "ucx", "sim", ...
  // False for a backend that moves message lengths but no bytes (the
  // simulator's sizes-only mode): send/recv then ignore their data pointers,
  // and the executor moves no bytes either (see sched/executor.hpp).
  virtual bool carries_payload() const { return true; }

  virtual void send(int peer, Tag tag, const void* data, size_t length, CompletionFn done,
                    void* context) = 0;
  virtual void recv(int peer, Tag tag, void* data, size_t capacity, CompletionFn done,
                    void* context) = 0;

  // Cancels the send or receive this rank posted to `peer` with `tag` and
  // completion context `context` whose completion has not run yet (nothing
  // happens if there is none). The completion still runs exactly once, from
  // a later progress(), never inside cancel(): with Errc::cancelled when the
  // operation was stopped (its buffer is not touched again), else with its
  // own result once it completes.
  virtual void cancel(int peer, Tag tag, void* context, CancelMode mode) = 0;

  // Looks for an arrived but unmatched message from `peer` (or any peer if
  // peer < 0) whose tag equals `tag` on the bits set in `mask`, without
  // receiving it. Used to diagnose peers that disagree (different stamp).
  struct Probe {
    int source;
    Tag tag;
    size_t length;
  };
  virtual std::optional<Probe> probe(int peer, Tag tag, Tag mask) = 0;

  virtual void set_am_handler(uint16_t id, AmHandler handler) = 0;
  virtual void am_send(int peer, uint16_t id, std::span<const std::byte> payload) = 0;

  // Advances communication; returns true if anything completed or arrived.
  virtual bool progress() = 0;

  // Sleeps until the transport has something to do, `extra_fd` (if >= 0)
  // is readable, or `max` has passed. May return early; never blocks longer.
  virtual void block(int extra_fd, std::chrono::microseconds max) = 0;

  // Seconds since an arbitrary epoch: wall clock for real backends, virtual
  // time in the simulator.
  virtual double now() const = 0;
};

}  // namespace grove
