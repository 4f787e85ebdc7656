// The event queue's spare lanes (event_queue.hpp): events of one kind
// pushed as a merge of several time-ordered sequences (an alltoallv's
// deliveries of blocks a byte or two apart), fewer than the kind's lanes
// or more (the rest in the heap), leave exactly in (time, seq) order.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "transport/sim/event_queue.hpp"

namespace grove::sim {
namespace {

TEST(SimEventQueue, MergedOrderedSequencesLeaveInTimeThenInsertionOrder) {
  for (int sequences : {2, 4, 7}) {
    std::mt19937_64 rng(static_cast<uint64_t>(sequences));
    EventQueue queue;
    std::map<std::pair<Time, uint64_t>, Event> reference;
    std::vector<Time> last(static_cast<size_t>(sequences), 0);
    uint64_t seq = 0;
    Time now = 0;
    for (int round = 0; round < 30000; ++round) {
      // Each push continues one sequence (of kind 2, or now and then 5):
      // after `now`, after that sequence's last event.
      for (int p = static_cast<int>(rng() % 3); p > 0; --p) {
        Time& previous = last[rng() % last.size()];
        previous = std::max(previous, now) + static_cast<Time>(rng() % 50);
        const auto kind = static_cast<uint8_t>(rng() % 9 == 0 ? 5 : 2);
        const Event e{previous, seq++, static_cast<uint32_t>(rng()), kind};
        queue.push(e);
        reference.emplace(std::make_pair(e.time, e.seq), e);
      }
      if (!queue.empty() && rng() % 2 == 0) {
        const Event want = reference.begin()->second;
        reference.erase(reference.begin());
        ASSERT_EQ(queue.top().seq, want.seq) << sequences << " " << round;
        const Taken got = queue.pop();
        ASSERT_EQ(got.time, want.time);
        ASSERT_EQ(got.id, want.id);
        ASSERT_EQ(got.kind, want.kind);
        now = got.time;
      }
      ASSERT_EQ(queue.size(), reference.size());
    }
    while (!queue.empty()) {
      const Event want = reference.begin()->second;
      reference.erase(reference.begin());
      const Taken got = queue.pop();
      ASSERT_EQ(got.time, want.time);
      ASSERT_EQ(got.id, want.id);
      ASSERT_EQ(got.kind, want.kind);
    }
    EXPECT_TRUE(reference.empty());
  }
}

// peek (the engine's prefetch hint) names the events behind the earliest
// in the earliest source, that source's kind, and nothing for the heap or
// past the source's end.
TEST(SimEventQueue, PeekNamesTheEarliestSourcesNextEvents) {
  EventQueue queue;
  uint64_t seq = 0;
  queue.push(10, seq++, 1, 3);
  queue.push(20, seq++, 2, 3);
  queue.push(30, seq++, 3, 3);
  queue.push(15, seq++, 9, 4);
  uint32_t ids[4] = {};
  uint8_t kind = 0;
  ASSERT_EQ(queue.peek(ids, 4, kind), 3u);
  EXPECT_EQ(ids[0], 1u);
  EXPECT_EQ(ids[1], 2u);
  EXPECT_EQ(ids[2], 3u);
  EXPECT_EQ(kind, 3);
  ASSERT_EQ(queue.peek(ids, 2, kind), 2u);
  EXPECT_EQ(queue.pop().id, 1u);
  ASSERT_EQ(queue.peek(ids, 4, kind), 1u);  // kind 4's lane is now the earliest
  EXPECT_EQ(ids[0], 9u);
  EXPECT_EQ(kind, 4);
  // Kind 5 out of order: its lane, its three spares, then the heap, which
  // holds the earliest.
  for (uint32_t i = 0; i < 5; ++i)
    queue.push(9 - i, seq++, 100 + i, 5);
  EXPECT_EQ(queue.peek(ids, 4, kind), 0u);
  EXPECT_EQ(queue.pop().id, 104u);
  ASSERT_EQ(queue.peek(ids, 4, kind), 1u);  // the last spare taken
  EXPECT_EQ(ids[0], 103u);
  EXPECT_EQ(kind, 5);
}

}  // namespace
}  // namespace grove::sim
