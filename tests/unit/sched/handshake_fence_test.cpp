// The sleep handshake fences (sched/handshake_fence.hpp): the
// store-buffer litmus test, one thread as the publisher (store, publish
// fence, load) and one as the sleeper (store, sleep fence, load), many
// rounds: never may both loads miss the other's store.

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "sched/handshake_fence.hpp"

namespace grove::sched {
namespace {

// Both threads enter round r together (spinning with yields, so the test
// also runs when the threads share a core).
struct Rounds {
  std::atomic<int> arrived{0};
  std::atomic<int> round{0};
  void meet(int r) {
    if (arrived.fetch_add(1) == 1) {
      arrived.store(0);
      round.store(r + 1);
    } else {
      while (round.load() <= r)
        std::this_thread::yield();
    }
  }
};

TEST(HandshakeFence, PublisherOrSleeperSeesTheOthersStore) {
  // Where the kernel refuses the barrier, both fences are full fences and
  // the litmus holds all the same.
  constexpr int kRounds = 10000;
  std::atomic<uint64_t> published{0}, sleeping{0};
  std::vector<uint8_t> publisher_saw(kRounds), sleeper_saw(kRounds);
  Rounds rounds;
  std::thread publisher([&] {
    for (int r = 0; r < kRounds; ++r) {
      rounds.meet(2 * r);
      published.store(r + 1, std::memory_order_relaxed);
      publish_fence();
      publisher_saw[r] = sleeping.load(std::memory_order_relaxed) == uint64_t(r + 1);
      rounds.meet(2 * r + 1);
    }
  });
  bool every_sleeper_fence_held = true;
  for (int r = 0; r < kRounds; ++r) {
    rounds.meet(2 * r);
    sleeping.store(r + 1, std::memory_order_relaxed);
    const bool held = sleep_fence();
    every_sleeper_fence_held = every_sleeper_fence_held && held;
    sleeper_saw[r] = published.load(std::memory_order_relaxed) == uint64_t(r + 1);
    rounds.meet(2 * r + 1);
  }
  publisher.join();
  // A registered process can make the others pass a barrier.
  if (asymmetric_fences()) {
    EXPECT_TRUE(every_sleeper_fence_held);
  }
  int missed = 0;
  for (int r = 0; r < kRounds; ++r)
    missed += !publisher_saw[r] && !sleeper_saw[r];
  EXPECT_EQ(missed, 0) << "rounds in which neither side saw the other's store";
}

}  // namespace
}  // namespace grove::sched
