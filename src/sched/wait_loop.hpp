#pragma once
// The one wait loop. Every wait in grove runs here: a collective's schedule
// (api/operation.cpp), the fence (api/fence_call.cpp), a call on a
// communicator's shared-memory segment (coll/shm/group.cpp) and an aborted
// execution waiting for its cancellations (sched/executor.cpp). What differs
// between them is supplied by the caller: how the awaited condition is
// looked at, what else is checked each round, how the rank sleeps, and the
// cadence (WaitCadence). docs/wait.md describes the loop, its parameters and
// why each value is what it is.
//
// A waiter is any object with
//   bool ready();         the condition; cheap when polled (inlined here)
//   void check();         once per round, after the clock: may throw (a
//                         departed peer, a mismatch); may make ready() true
//   bool progress();      advances the transport; true if anything happened
//   void sleep(std::chrono::microseconds max);  blocks at most `max`, or
//                         until the transport or the condition wakes it
// and the two ways of giving the core away that WaiterBase provides (tests
// replace them to watch the loop's decisions). The loop is a template so a
// shared-memory wait's poll is a load and a compare, not a call through a
// pointer.

#include <algorithm>
#include <chrono>
#include <thread>

#include "sched/wait.hpp"

namespace grove::sched {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

struct WaiterBase {
  static void yield() { std::this_thread::yield(); }
  // The lazy policy's sleep.
  static void nap(std::chrono::microseconds duration) { std::this_thread::sleep_for(duration); }
};

// How one kind of wait spends its rounds. A round: `polls_per_round` looks
// at the condition, then progress if due (and a look), then one reading of
// the clock (the timeout), check(), then nothing, a yield or a sleep under
// the policy.
struct WaitCadence {
  // Looks at the condition before each reading of the clock; 0 when only
  // progress can change it (then progress comes every round).
  int polls_per_round = 0;
  // Rounds between two progress calls while spinning; a round that may
  // sleep progresses every time.
  unsigned rounds_per_progress = 1;
  // Transport activity restarts hybrid's spin window: true when activity
  // means the awaited messages are moving.
  bool activity_restarts_spin = true;
  // A round whose progress found work yields the core (true) or goes
  // straight on to the next round (false).
  bool yield_after_activity = false;
  // The longest sleep before the loop looks again.
  std::chrono::microseconds max_sleep{100000};
};

// A wait whose condition only progress on the transport makes true (a
// schedule, the fence): progress every round, sleep on the transport's fd
// in slices of wait_block_slice_us.
WaitCadence transport_cadence(const WaitOptions& options);
// A wait on a word in shared memory that another process writes:
// wait_polls_per_round polls per clock reading, progress every
// wait_rounds_per_progress spinning rounds and every round that may sleep,
// futex sleeps of at most shm_wake_interval_us; on an oversubscribed host
// that yields, one poll and one progress per round.
WaitCadence local_memory_cadence(const WaitOptions& options);

// Runs rounds until waiter.ready() (true) or `options.timeout` passed
// (false: the caller names what timed out). Exceptions from the waiter
// propagate. `progressed`: the caller progressed the transport just before
// (and ready() was false then); the first round takes that progress, with
// its result `active`, instead of making another. `Clock` is a parameter
// for the tests only.
//
// Progress comes before the clock in a round: a round that begins when the
// core comes back (after a yield or a sleep) looks at the transport first,
// and the round whose progress completes the wait reads no clock and runs
// no check. A round sleeps only if it progressed (so nothing that arrived
// meanwhile is slept through); whether a round may sleep is known from the
// previous round's clock reading, and the first round allowed to sleep
// without having progressed goes on to the next instead.
template <class Waiter, class Clock = std::chrono::steady_clock>
bool wait_loop(Waiter& waiter, const WaitOptions& options, const WaitCadence& cadence,
               bool progressed = false, bool active = false) {
  const auto start = Clock::now();
  const auto deadline = start + options.timeout;
  auto spin_from = start;  // hybrid: sleeping allowed once `spin` passed since
  const bool always_may_sleep =
      options.policy == WaitPolicy::block || options.policy == WaitPolicy::lazy;
  bool may_sleep = always_may_sleep;  // by the last clock reading
  for (unsigned round = 1;; ++round) {
    for (int i = 0; i < cadence.polls_per_round; ++i) {
      if (waiter.ready()) return true;
      cpu_relax();
    }
    bool progressed_here = true;
    if (progressed) {
      progressed = false;  // the caller's progress stands for this round's
    } else if (may_sleep || round % cadence.rounds_per_progress == 0) {
      active = waiter.progress();
      if (waiter.ready()) return true;
    } else {
      active = false;
      progressed_here = false;
    }
    const auto now = Clock::now();
    if (now >= deadline) return false;
    waiter.check();
    // Read after the progress call ended: one call that moves a large
    // message (a rendezvous copy) can outlast the whole window, and the next
    // round would then sleep while the rest of the exchange is still under
    // way if the window restarted when the round began.
    if (active && cadence.activity_restarts_spin) spin_from = now;
    may_sleep = always_may_sleep ||
                (options.policy == WaitPolicy::hybrid && now - spin_from >= options.spin);
    if (active) {
      if (cadence.yield_after_activity) waiter.yield();
      continue;
    }
    if (!may_sleep || !progressed_here) {
      // Yielding costs one system call when the core is ours alone, and
      // hands the core to a peer rank when ranks outnumber cores (where a
      // pure spin would hold it for a whole scheduler time slice).
      if (options.yield_when_idle) waiter.yield();
      continue;
    }
    // check() may have completed the wait (a departed member's messages,
    // drained): no sleep then.
    if (waiter.ready()) return true;
    // Past the deadline by a microsecond, so the next round times out
    // instead of spinning out the rest.
    const auto left = std::chrono::duration_cast<std::chrono::microseconds>(deadline - now) +
                      std::chrono::microseconds(1);
    if (options.policy == WaitPolicy::lazy) {
      waiter.nap(std::min(options.sleep, left));
    } else {
      waiter.sleep(std::min(left, cadence.max_sleep));
    }
  }
}

}  // namespace grove::sched
