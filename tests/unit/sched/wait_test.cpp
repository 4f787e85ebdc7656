#include "sched/wait.hpp"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "core/params.hpp"
#include "support/memory_world.hpp"

namespace grove::sched {
namespace {

struct Flag {
  bool set = false;
  static void fn(void* context, const Status&) { static_cast<Flag*>(context)->set = true; }
};

// A ring exchange with one thread per rank, each waiting under `policy`.
void ring_under_policy(const std::string& policy) {
  params::ScopedSet set_policy("wait_policy", policy);
  params::ScopedSet set_timeout("timeout_ms", "20000");
  constexpr int kRanks = 4;
  constexpr int kRounds = 20;
  MemoryWorld world(kRanks);
  std::vector<int> last(kRanks, -1);
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r) {
    threads.emplace_back([&, r] {
      Transport& t = world.transport(r);
      for (int round = 0; round < kRounds; ++round) {
        const int value = r * 1000 + round;
        int incoming = -1;
        Flag sent, received;
        t.recv((r + kRanks - 1) % kRanks, round, &incoming, sizeof incoming, Flag::fn, &received);
        t.send((r + 1) % kRanks, round, &value, sizeof value, Flag::fn, &sent);
        wait_until(
            t, -1, [&] { return sent.set && received.set; }, "ring round");
        last[r] = incoming;
      }
    });
  }
  for (auto& th : threads)
    th.join();
  for (int r = 0; r < kRanks; ++r)
    EXPECT_EQ(last[r], ((r + kRanks - 1) % kRanks) * 1000 + kRounds - 1) << policy;
}

TEST(Wait, EveryPolicyCompletesARing) {
  for (const char* policy : {"spin", "lazy", "block", "hybrid"})
    ring_under_policy(policy);
}

TEST(Wait, ParametersSelectThePolicy) {
  params::ScopedSet p("wait_policy", "lazy");
  params::ScopedSet s("wait_sleep_us", "250");
  params::ScopedSet h("wait_spin_us", "7");
  params::ScopedSet t("timeout_ms", "1234");
  const WaitOptions o = wait_options_from_params();
  EXPECT_EQ(o.policy, WaitPolicy::lazy);
  EXPECT_EQ(o.sleep.count(), 250);
  EXPECT_EQ(o.spin.count(), 7);
  EXPECT_EQ(o.timeout.count(), 1234);
  EXPECT_EQ(params::Registry::global().get("wait_policy").spec.default_value, "hybrid");
}

// wait_yield=auto: oversubscribed hosts yield; so do ranks that share a host
// and are free to run on several cores (two of them may land on one core); a
// rank bound to a core of its own, or alone on its host, does not.
TEST(Wait, AutoYieldFollowsOversubscriptionAndBinding) {
  EXPECT_TRUE(yield_by_default(/*oversubscribed=*/true, 4, 1));
  EXPECT_TRUE(yield_by_default(true, 4, 2));
  EXPECT_TRUE(yield_by_default(false, 2, 2));
  EXPECT_TRUE(yield_by_default(false, 2, 64));
  EXPECT_FALSE(yield_by_default(false, 2, 1));
  EXPECT_FALSE(yield_by_default(false, 64, 1));
  EXPECT_FALSE(yield_by_default(false, 1, 2));
  EXPECT_EQ(params::Registry::global().get("wait_yield").spec.default_value, "auto");
  params::ScopedSet off("wait_yield", "off");
  set_host_load(8, 2);
  EXPECT_TRUE(wait_options_from_params().oversubscribed);
  EXPECT_FALSE(wait_options_from_params().yield_when_idle);
  params::ScopedSet on("wait_yield", "on");
  set_host_load(1, 2);
  EXPECT_FALSE(wait_options_from_params().oversubscribed);
  EXPECT_TRUE(wait_options_from_params().yield_when_idle);
  set_host_load(1, 0);
}

// wait_oversubscribed=sleep: hybrid blocks at once on an oversubscribed
// host only; other policies and hosts with a core per rank are unchanged;
// the default (spin) keeps hybrid everywhere.
TEST(Wait, OversubscribedHybridSleepsWhenAsked) {
  EXPECT_EQ(params::Registry::global().get("wait_oversubscribed").spec.default_value, "spin");
  params::ScopedSet hybrid("wait_policy", "hybrid");
  set_host_load(8, 2);
  EXPECT_EQ(wait_options_from_params().policy, WaitPolicy::hybrid);
  {
    params::ScopedSet sleep("wait_oversubscribed", "sleep");
    EXPECT_EQ(wait_options_from_params().policy, WaitPolicy::block);
    set_host_load(2, 2);
    EXPECT_EQ(wait_options_from_params().policy, WaitPolicy::hybrid);
    set_host_load(8, 2);
    params::ScopedSet spin("wait_policy", "spin");
    EXPECT_EQ(wait_options_from_params().policy, WaitPolicy::spin);
  }
  EXPECT_EQ(wait_options_from_params().policy, WaitPolicy::hybrid);
  set_host_load(1, 0);
}

TEST(Wait, TimeoutNamesTheOperation) {
  for (const char* policy : {"spin", "lazy", "block", "hybrid"}) {
    params::ScopedSet p("wait_policy", policy);
    params::ScopedSet t("timeout_ms", "30");
    MemoryWorld world(2);
    int incoming = 0;
    Flag received;
    world.transport(1).recv(0, 5, &incoming, sizeof incoming, Flag::fn, &received);
    try {
      wait_until(
          world.transport(1), -1, [&] { return received.set; }, "bcast(root=0, 4 B, binomial)",
          [] { return std::string("waiting on recv from 0"); });
      ADD_FAILURE() << "no timeout under " << policy;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::timeout);
      EXPECT_EQ(std::string(e.what()),
                "bcast(root=0, 4 B, binomial): timed out after 30 ms (waiting on recv from 0)");
    }
  }
}

TEST(Wait, ReturnsAtOnceWhenAlreadyDone) {
  MemoryWorld world(1);
  int calls = 0;
  wait_until(
      world.transport(0), -1, [&] { return ++calls > 0; }, "nothing");
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace grove::sched
