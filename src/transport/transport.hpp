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
