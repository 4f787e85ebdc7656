#pragma once
// MemoryWorld: a test-only in-memory transport world. `MemoryWorld world(n)`
// owns n Transport objects living in one process (world.transport(r)).
//
// Semantics are those of transport/transport.hpp:
// - tagged messages match by exact (source, tag), non-overtaking per
//   (source, tag); a message longer than the posted receive completes it with
//   Errc::truncated (the first `capacity` bytes are copied);
// - completions run from inside the owning rank's progress() (or, in
//   SendMode::immediate, inside the posting call itself);
// - active messages are copied at am_send and delivered in order per pair
//   from inside the receiver's progress(); an AM for an id with no handler
//   stays queued until one is registered;
// - depart(r) makes r a departed peer: receives from r that no message
//   already sent by r can satisfy complete with Errc::peer_failed, sends to r
//   complete with Errc::peer_failed;
// - cancel() removes a posted receive (or, in rendezvous mode, a send no
//   receive took yet): it completes with Errc::cancelled at the next
//   progress().
// - one-sided access (RMA): regions are heap memory of this process; a put,
//   get or atomic acts on the target's memory at the call and completes at
//   the caller's next progress(), as does a flush. Targets are mapped()
//   unless Options::rma_mapped is false, which makes callers use put/get.
//   hold_rma(t) stalls operations to t (below).
//
// Messages sent to rank d "arrive" only when d calls progress(). With a
// non-zero seed, arrivals are shuffled across different (source, tag)
// streams and some are held back for a later progress() call, to shake out
// ordering assumptions; order within one stream is always kept.
//
// Use either single-threaded (run_until progresses every rank round-robin)
// or with one thread per rank (the world is guarded by one mutex and
// block() sleeps until something is delivered to that rank). This is a test
// helper; the real simulator lives in src/transport/sim/.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "transport/transport.hpp"

namespace grove {

class MemoryWorld {
 public:
  enum class SendMode {
    // Data is copied at send(); the send completes at the sender's next
    // progress(). Like a small (eager) message on a real network.
    eager,
    // Data is copied at send() and the send completes inside send(); a
    // receive posted for an already-arrived message completes inside recv().
    // Exercises callers' handling of immediate completion.
    immediate,
    // The send completes only after the receiver matched it (the data is
    // copied from the sender's buffer at match time). Like a large UCX
    // rendezvous message: finds schedules that need unbounded buffering.
    rendezvous,
  };

  struct Options {
    uint64_t seed = 0;  // 0: deterministic FIFO arrival
    SendMode send_mode = SendMode::eager;
    // false: a sizes-only world (like the simulator's): messages carry their
    // lengths but no bytes, data pointers are ignored, carries_payload() is false.
    bool carries_payload = true;
    // Whether attached RMA targets expose their memory (Transport::RmaTarget::mapped).
    bool rma_mapped = true;
  };

  // Per-rank counters, for tests of in-flight limits.
  struct Stats {
    size_t sends_in_flight = 0;  // posted, not yet completed
    size_t recvs_in_flight = 0;
    size_t max_sends_in_flight = 0;
    size_t max_recvs_in_flight = 0;
    size_t sends_posted = 0;
    size_t recvs_posted = 0;
    size_t bytes_sent = 0;
    size_t ams_sent = 0;
    size_t rma_ops = 0;  // puts, gets and atomics issued
  };

  explicit MemoryWorld(int size);
  MemoryWorld(int size, Options options);
  ~MemoryWorld();
  MemoryWorld(const MemoryWorld&) = delete;
  MemoryWorld& operator=(const MemoryWorld&) = delete;

  int size() const;
  Transport& transport(int rank);

  // Calls progress() on every live rank once (in rank order, or a shuffled
  // order with a seed). Returns true if anything happened.
  bool progress_all();

  // Progresses all ranks round-robin until pred() holds; returns the number
  // of rounds used. Throws grove::Error(Errc::timeout) naming `what` and
  // listing what is pending if pred() still fails after max_rounds rounds, or
  // earlier if the world is stalled (nothing in flight, nothing happened).
  size_t run_until(const std::function<bool()>& pred, size_t max_rounds = 1000000,
                   std::string_view what = "run_until");

  // A target that never answers: one-sided operations issued to `target`
  // are neither performed nor completed until release_rma(target), which
  // performs them then (a late write into the issuer's buffer, as a real
  // transport would do), unless the issuer gave up on the connection
  // first (Transport::cancel with CancelMode::fail_peer): then they
  // complete with Errc::peer_failed and are never performed.
  void hold_rma(int target);
  void release_rma(int target);

  // Marks `rank` departed (see above) and wakes every rank.
  void depart(int rank);

  Stats stats(int rank) const;
  void reset_stats();

  // True when no message, AM or completion is in flight anywhere.
  bool quiescent() const;
  // Posted receives and unmatched messages per rank, for failure messages.
  std::string describe() const;

  struct State;  // implementation, in memory_world.cpp

 private:
  std::unique_ptr<State> state_;
};

}  // namespace grove
