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
// - One-sided access (RMA, below) is optional: supports_rma() says whether a
//   backend has it; the rma_* calls of one that does not throw Errc::transport.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

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

// ---- One-sided access (RMA) ----
//
// A rank allocates memory registered for remote access (rma_allocate) and
// hands its key() to peers (any side channel); a peer attaches it
// (rma_attach) and then puts, gets and updates it atomically without the
// owner taking part. Semantics every backend with RMA provides:
// - rma_put/rma_get/rma_atomic are non-blocking; `done` runs exactly once,
//   from progress() or inside the call, as for send. Local buffers (the
//   source of a put, the destination of a get, an atomic's fetch word) must
//   stay valid until then. A completed put's source may be reused; the
//   target is only guaranteed to see it after a later rma_flush.
// - rma_flush(peer) completes once every operation this rank issued to
//   `peer` (every peer when peer < 0) before the call is complete at the
//   target.
// - Atomics act on one aligned 4- or 8-byte word and are atomic with respect
//   to every other atomic on that word, from any rank and through either path
//   below. add, band, bor and bxor may be posted (no result); add and cswap
//   fetch the previous value (cswap always does). There is no fetching
//   and/or/xor: UCX 1.13's shared-memory path returns the previous value of
//   one without applying it (tests/unit/transport/ucx_rma_test.cpp keeps the
//   offered operations honest); callers build them from cswap.
// - A target may be mapped(): its memory is then addressable in this process
//   (shared memory), and callers may load and store through the pointer
//   (with the C++ memory model's atomics for words others update) instead of
//   calling put/get. rma_direct=false turns mapping off.
// - Failures complete with Errc::peer_failed (the peer departed) or
//   Errc::transport. Regions and targets must not outlive their transport.

// Memory of this rank that peers may access. Zeroed at allocation.
class RmaRegion {
 public:
  virtual ~RmaRegion() = default;
  std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  // What a peer passes to rma_attach; opaque, backend-specific.
  std::span<const std::byte> key() const { return key_; }

 protected:
  std::byte* data_ = nullptr;
  size_t size_ = 0;
  std::vector<std::byte> key_;
};

// A peer's region as this rank sees it.
class RmaTarget {
 public:
  virtual ~RmaTarget() = default;
  size_t size() const { return size_; }
  // The target's memory in this process, or null (access through put/get).
  std::byte* mapped() const { return mapped_; }

 protected:
  size_t size_ = 0;
  std::byte* mapped_ = nullptr;
};

enum class RmaAtomicOp : uint8_t { add, band, bor, bxor, cswap };

struct RmaAtomic {
  RmaAtomicOp op = RmaAtomicOp::add;
  uint8_t width = 8;          // bytes: 4 or 8; the target offset is a multiple of it
  uint64_t operand = 0;       // add/band/bor/bxor: the operand; cswap: the new value
  uint64_t compare = 0;       // cswap: the value expected at the target
  uint64_t* fetch = nullptr;  // add, cswap: receives the previous value (low `width` bytes)
};

// Whether `atomic` is one the interface offers (see above).
inline bool rma_atomic_offered(const RmaAtomic& atomic) {
  if (atomic.width != 4 && atomic.width != 8) return false;
  if (atomic.op == RmaAtomicOp::cswap) return atomic.fetch != nullptr;
  return atomic.fetch == nullptr || atomic.op == RmaAtomicOp::add;
}

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

  // ---- One-sided access (see RmaRegion above). Defaults: no RMA.
  virtual bool supports_rma() const { return false; }
  // `bytes` of zeroed, registered memory (at least 1 byte is allocated).
  virtual std::unique_ptr<RmaRegion> rma_allocate(size_t bytes);
  // Peer `peer`'s region, from the key it published. Throws grove::Error
  // (protocol) for a key this backend cannot read.
  virtual std::unique_ptr<RmaTarget> rma_attach(int peer, std::span<const std::byte> key);
  virtual void rma_put(RmaTarget& target, size_t offset, const void* data, size_t length,
                       CompletionFn done, void* context);
  virtual void rma_get(RmaTarget& target, size_t offset, void* data, size_t length,
                       CompletionFn done, void* context);
  virtual void rma_atomic(RmaTarget& target, size_t offset, const RmaAtomic& atomic,
                          CompletionFn done, void* context);
  virtual void rma_flush(int peer, CompletionFn done, void* context);
  // Orders this rank's one-sided operations: every one issued before the
  // fence is performed at its target before any issued after it.
  // Non-blocking.
  virtual void rma_fence();
};

}  // namespace grove
