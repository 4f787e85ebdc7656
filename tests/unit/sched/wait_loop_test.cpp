// The one wait loop (sched/wait_loop.hpp) on a fake clock with a waiter
// that records every hook call: polls per round, progress cadence, the
// yield/sleep decisions of each policy and cadence, the timeout, and the
// checks.

#include "sched/wait_loop.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <climits>
#include <functional>
#include <string>
#include <vector>

#include "grove/error.hpp"

namespace grove::sched {
namespace {

// A clock the test moves: each reading returns the current time; the
// waiter advances it (by `step` per check, and by what it sleeps).
struct FakeClock {
  using rep = int64_t;
  using period = std::micro;
  using duration = std::chrono::microseconds;
  using time_point = std::chrono::time_point<FakeClock>;
  static constexpr bool is_steady = true;
  static inline int64_t us = 0;
  static inline int reads = 0;
  static time_point now() {
    ++reads;
    return time_point(duration(us));
  }
};

// Records the loop's calls as tokens: "64p" (64 polls that found the
// condition false), "c" (check), "P" / "A" (progress: idle / found work),
// "Y" (yield), "S<us>" (sleep hook), "N<us>" (lazy nap). The look at the
// condition right after each progress is counted, not recorded, and so is
// the look between a check and a sleep.
struct Recorder : WaiterBase {
  std::vector<std::string> trace;
  int pending_polls = 0;
  int checks = 0;
  int progresses = 0;
  int looks_after_progress = 0;
  int looks_before_sleep = 0;
  bool just_progressed = false;
  int ready_at_check = INT_MAX;     // ready once this many checks ran
  int ready_at_progress = INT_MAX;  // ready once this many progress calls ran
  int64_t step_us = 1;              // clock advance per check
  std::function<bool(int)> active_at = [](int) { return false; };  // by progress number
  std::function<void()> on_check;

  bool condition() const { return checks >= ready_at_check || progresses >= ready_at_progress; }
  void flush_polls() {
    if (pending_polls > 0) trace.push_back(std::to_string(pending_polls) + "p");
    pending_polls = 0;
  }
  bool ready() {
    if (just_progressed) {
      just_progressed = false;
      ++looks_after_progress;
      return condition();
    }

    if (condition()) return true;
    ++pending_polls;
    return false;
  }
  void check() {
    flush_polls();
    trace.push_back("c");
    ++checks;
    FakeClock::us += step_us;
    if (on_check) on_check();
  }
  bool progress() {
    flush_polls();
    const bool active = active_at(++progresses);
    trace.push_back(active ? "A" : "P");
    just_progressed = true;
    return active;
  }
  // A check flushes the polls before it, so looks pending at a sleep came
  // after the round's check: the loop's look before sleeping.
  void take_look_before_sleep() {
    looks_before_sleep += pending_polls;
    pending_polls = 0;
  }
  void sleep(std::chrono::microseconds max) {
    take_look_before_sleep();
    trace.push_back("S" + std::to_string(max.count()));
  }
  void yield() {
    flush_polls();
    trace.push_back("Y");
  }
  void nap(std::chrono::microseconds d) {
    take_look_before_sleep();
    trace.push_back("N" + std::to_string(d.count()));
  }
  // The tokens per round: a round starts with its polls; without polls,
  // with its progress, or with its check when it did not progress (a round
  // progresses only before its check).
  std::vector<std::vector<std::string>> rounds() {
    flush_polls();
    std::vector<std::vector<std::string>> out;
    std::string previous;
    for (const std::string& t : trace) {
      const bool polls = t.back() == 'p';
      const bool after_polls = !previous.empty() && previous.back() == 'p';
      const bool after_progress = previous == "P" || previous == "A";
      const bool starts = polls || ((t == "P" || t == "A") && !after_polls) ||
                          (t == "c" && !after_polls && !after_progress);
      if (starts || out.empty()) out.emplace_back();
      out.back().push_back(t);
      previous = t;
    }
    return out;
  }
};

std::string joined(const std::vector<std::string>& tokens) {
  std::string s;
  for (const std::string& t : tokens)
    s += (s.empty() ? "" : " ") + t;
  return s;
}

WaitOptions options_for(WaitPolicy policy) {
  WaitOptions o;
  o.policy = policy;
  o.yield_when_idle = false;
  o.oversubscribed = false;
  o.sleep = std::chrono::microseconds(100);
  o.spin = std::chrono::microseconds(50);
  o.timeout = std::chrono::milliseconds(60000);
  o.polls_per_round = 64;
  o.rounds_per_progress = 16;
  o.block_slice = std::chrono::microseconds(100000);
  o.shm_wake_interval = std::chrono::microseconds(1000);
  return o;
}

bool run(Recorder& w, const WaitOptions& o, const WaitCadence& c, bool progressed = false,
         bool active = false) {
  FakeClock::us = 1000000;
  FakeClock::reads = 0;
  return wait_loop<Recorder, FakeClock>(w, o, c, progressed, active);
}

TEST(WaitLoop, CadencesComeFromTheOptions) {
  WaitOptions o = options_for(WaitPolicy::hybrid);
  const WaitCadence t = transport_cadence(o);
  EXPECT_EQ(t.polls_per_round, 0);
  EXPECT_EQ(t.rounds_per_progress, 1u);
  EXPECT_TRUE(t.activity_restarts_spin);
  EXPECT_FALSE(t.yield_after_activity);
  EXPECT_EQ(t.max_sleep.count(), 100000);
  const WaitCadence m = local_memory_cadence(o);
  EXPECT_EQ(m.polls_per_round, 64);
  EXPECT_EQ(m.rounds_per_progress, 16u);
  EXPECT_FALSE(m.activity_restarts_spin);
  EXPECT_TRUE(m.yield_after_activity);
  EXPECT_EQ(m.max_sleep.count(), 1000);
  // Oversubscribed and yielding: one poll and one progress per round.
  o.oversubscribed = o.yield_when_idle = true;
  const WaitCadence y = local_memory_cadence(o);
  EXPECT_EQ(y.polls_per_round, 1);
  EXPECT_EQ(y.rounds_per_progress, 1u);
  // Oversubscribed but not yielding (wait_yield=off): the full round.
  o.yield_when_idle = false;
  EXPECT_EQ(local_memory_cadence(o).polls_per_round, 64);
}

// Spinning on a core of its own: 64 polls per clock reading, progress every
// 16th round (before the clock), never a yield or a sleep.
TEST(WaitLoop, LocalMemorySpinProgressesEverySixteenthRound) {
  const WaitOptions o = options_for(WaitPolicy::spin);
  Recorder w;
  w.ready_at_check = 40;
  ASSERT_TRUE(run(w, o, local_memory_cadence(o)));
  const auto rounds = w.rounds();
  // 40 full rounds; the first poll of round 41 finds the condition.
  ASSERT_EQ(rounds.size(), 40u);
  for (size_t r = 1; r <= 40; ++r) {
    const std::string expected = r % 16 == 0 ? "64p P c" : "64p c";
    EXPECT_EQ(joined(rounds[r - 1]), expected) << "round " << r;
  }
  EXPECT_EQ(w.progresses, 2);
  EXPECT_EQ(w.looks_after_progress, 2);
  EXPECT_EQ(FakeClock::reads, 41);  // one clock reading per round, plus the start
}

TEST(WaitLoop, LocalMemorySpinYieldsEveryRoundWhenAskedTo) {
  WaitOptions o = options_for(WaitPolicy::spin);
  o.yield_when_idle = true;
  Recorder w;
  w.ready_at_check = 20;
  ASSERT_TRUE(run(w, o, local_memory_cadence(o)));
  const auto rounds = w.rounds();
  EXPECT_EQ(joined(rounds[0]), "64p c Y");
  EXPECT_EQ(joined(rounds[15]), "64p P c Y");
}

// An oversubscribed host that yields: one poll, then progress and the core
// goes to another rank, every round.
TEST(WaitLoop, OversubscribedPollsOnceAndProgressesEveryRound) {
  WaitOptions o = options_for(WaitPolicy::hybrid);
  o.oversubscribed = o.yield_when_idle = true;
  o.spin = std::chrono::microseconds(1000000);  // stays in the spin window
  Recorder w;
  w.ready_at_check = 4;
  ASSERT_TRUE(run(w, o, local_memory_cadence(o)));
  const auto rounds = w.rounds();
  // The fourth check makes it ready; the next round's poll finds it.
  ASSERT_EQ(rounds.size(), 4u);
  for (int r = 0; r < 4; ++r)
    EXPECT_EQ(joined(rounds[r]), "1p P c Y");
}

// block: every round progresses, then sleeps on the futex for at most the
// wake interval; a progress that found work yields instead of sleeping.
TEST(WaitLoop, LocalMemoryBlockSleepsUnlessProgressFoundWork) {
  const WaitOptions o = options_for(WaitPolicy::block);
  Recorder w;
  w.ready_at_check = 4;
  w.active_at = [](int n) { return n == 2; };
  ASSERT_TRUE(run(w, o, local_memory_cadence(o)));
  const auto rounds = w.rounds();
  EXPECT_EQ(joined(rounds[0]), "64p P c S1000");
  EXPECT_EQ(joined(rounds[1]), "64p A c Y");
  EXPECT_EQ(joined(rounds[2]), "64p P c S1000");
  // The fourth check makes it ready: the look before sleeping finds it.
  ASSERT_EQ(rounds.size(), 4u);
  EXPECT_EQ(joined(rounds[3]), "64p P c");
  EXPECT_EQ(w.looks_before_sleep, 2);  // rounds 1 and 3; round 4's found it
}

// hybrid on shared memory: the spin window counts from the start of the
// wait; transport activity does not restart it.
TEST(WaitLoop, LocalMemoryHybridSpinsFromTheStartOnly) {
  const WaitOptions o = options_for(WaitPolicy::hybrid);  // spin 50 us
  Recorder w;
  w.step_us = 10;  // the clock moves 10 us per round (read before the check)
  w.ready_at_check = 10;
  w.active_at = [](int n) { return n == 2; };
  ASSERT_TRUE(run(w, o, local_memory_cadence(o)));
  const auto rounds = w.rounds();
  // Rounds 1-5 read 0..40 us: spinning, no progress (not the 16th round).
  // Round 6 reads 50 us: it may sleep, but did not progress, so it goes on.
  for (int r = 0; r < 6; ++r)
    EXPECT_EQ(joined(rounds[r]), "64p c") << r;
  EXPECT_EQ(joined(rounds[6]), "64p P c S1000");  // progress, then sleep
  EXPECT_EQ(joined(rounds[7]), "64p A c Y");      // work found: yield
  EXPECT_EQ(joined(rounds[8]), "64p P c S1000");  // and sleeps again at once
  ASSERT_EQ(rounds.size(), 10u);
  EXPECT_EQ(joined(rounds[9]), "64p P c");  // the tenth check: ready
}

// hybrid on the transport: progress every round, and activity restarts the
// spin window (the awaited messages are moving).
TEST(WaitLoop, TransportHybridActivityRestartsTheSpinWindow) {
  const WaitOptions o = options_for(WaitPolicy::hybrid);
  Recorder w;
  w.step_us = 10;
  w.ready_at_progress = 14;
  w.active_at = [](int n) { return n == 7; };
  ASSERT_TRUE(run(w, o, transport_cadence(o)));
  const auto rounds = w.rounds();
  ASSERT_EQ(rounds.size(), 14u);
  for (int r = 0; r < 5; ++r)
    EXPECT_EQ(joined(rounds[r]), "P c") << r;   // 0..40 us: spinning
  EXPECT_EQ(joined(rounds[5]), "P c S100000");  // 50 us without activity
  // Activity in the seventh round; the clock read after its progress ended
  // (60 us) restarts the window: a progress call that outlasts the window
  // must not make the next round sleep.
  EXPECT_EQ(joined(rounds[6]), "A c");
  for (int r = 7; r < 11; ++r)
    EXPECT_EQ(joined(rounds[r]), "P c") << r;    // 70..100 us: spinning again
  EXPECT_EQ(joined(rounds[11]), "P c S100000");  // 110 us: 50 since the progress ended
  EXPECT_EQ(joined(rounds[12]), "P c S100000");
  EXPECT_EQ(joined(rounds[13]), "P");  // the 14th progress completes it: no clock, no check
}

// The caller's own progress stands for the first round's: the schedule
// path progresses once before reading the clock.
TEST(WaitLoop, CallersProgressCountsForTheFirstRound) {
  const WaitOptions o = options_for(WaitPolicy::block);
  Recorder w;
  w.ready_at_progress = 2;
  ASSERT_TRUE(run(w, o, transport_cadence(o), true, false));
  auto rounds = w.rounds();
  ASSERT_EQ(rounds.size(), 3u);
  EXPECT_EQ(joined(rounds[0]), "c S100000");
  EXPECT_EQ(joined(rounds[1]), "P c S100000");
  EXPECT_EQ(joined(rounds[2]), "P");
  // With activity reported by the caller the first round does not sleep.
  Recorder busy;
  busy.ready_at_progress = 1;
  ASSERT_TRUE(run(busy, o, transport_cadence(o), true, true));
  rounds = busy.rounds();
  ASSERT_EQ(rounds.size(), 2u);
  EXPECT_EQ(joined(rounds[0]), "c");
  EXPECT_EQ(joined(rounds[1]), "P");
}

TEST(WaitLoop, LazyNapsAndSpinYieldsOnTheTransport) {
  WaitOptions o = options_for(WaitPolicy::lazy);
  Recorder lazy;
  lazy.ready_at_progress = 2;
  ASSERT_TRUE(run(lazy, o, transport_cadence(o)));
  EXPECT_EQ(joined(lazy.rounds()[0]), "P c N100");
  o.policy = WaitPolicy::spin;
  o.yield_when_idle = true;
  Recorder spin;
  spin.ready_at_progress = 2;
  ASSERT_TRUE(run(spin, o, transport_cadence(o)));
  EXPECT_EQ(joined(spin.rounds()[0]), "P c Y");
}

// The loop returns false once the clock passes the deadline; a sleep never
// runs past the deadline by more than a microsecond.
TEST(WaitLoop, TimesOutAtTheDeadline) {
  WaitOptions o = options_for(WaitPolicy::block);
  o.timeout = std::chrono::milliseconds(2);
  Recorder w;
  w.step_us = 700;
  EXPECT_FALSE(run(w, o, transport_cadence(o)));
  const auto rounds = w.rounds();
  // Rounds read the clock at 0, 700 and 1400 us and sleep for what is left
  // plus a microsecond; the fourth round's reading, at 2100 us, ends the
  // wait (after its progress).
  ASSERT_EQ(rounds.size(), 4u);
  EXPECT_EQ(joined(rounds[0]), "P c S2001");
  EXPECT_EQ(joined(rounds[1]), "P c S1301");
  EXPECT_EQ(joined(rounds[2]), "P c S601");
  EXPECT_EQ(joined(rounds[3]), "P");
  WaitOptions shm = options_for(WaitPolicy::block);
  shm.timeout = std::chrono::milliseconds(0);
  Recorder none;
  EXPECT_FALSE(run(none, shm, local_memory_cadence(shm)));
  EXPECT_EQ(joined(none.rounds()[0]), "64p P");  // polled, progressed, then out of time
}

// The condition is looked at right after every progress: a wait that
// progress completes does not sleep first.
TEST(WaitLoop, ReadyIsLookedAtAfterEveryProgress) {
  const WaitOptions o = options_for(WaitPolicy::block);
  Recorder w;
  w.ready_at_progress = 2;
  ASSERT_TRUE(run(w, o, local_memory_cadence(o)));
  const auto rounds = w.rounds();
  ASSERT_EQ(rounds.size(), 2u);
  EXPECT_EQ(joined(rounds[0]), "64p P c S1000");
  EXPECT_EQ(joined(rounds[1]), "64p P");
  EXPECT_EQ(w.looks_after_progress, 2);
}

TEST(WaitLoop, ACheckThatThrowsEndsTheWait) {
  const WaitOptions o = options_for(WaitPolicy::spin);
  Recorder w;
  w.on_check = [&] {
    if (w.checks == 3) throw Error(Errc::peer_failed, "rank 2 departed");
  };
  try {
    run(w, o, local_memory_cadence(o));
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::peer_failed);
    EXPECT_STREQ(e.what(), "rank 2 departed");
  }
  EXPECT_EQ(w.checks, 3);
  EXPECT_EQ(w.progresses, 0);
}

}  // namespace
}  // namespace grove::sched
