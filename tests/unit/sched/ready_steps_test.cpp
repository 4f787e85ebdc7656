// ReadySteps (src/sched/ready_steps.hpp): lowest id first whatever the
// order of pushes, and no storage while the ready steps form a run.

#include <gtest/gtest.h>

#include <functional>
#include <queue>
#include <random>
#include <vector>

#include "sched/ready_steps.hpp"

namespace grove::sched {
namespace {

TEST(ReadySteps, AStridedRunTakesNoStorage) {
  ReadySteps ready;
  ReadySpill spill;
  for (StepId id = 2; id < 20000; id += 2)
    ready.push(id, spill);
  EXPECT_EQ(ready.stored(), 0u);
  EXPECT_EQ(spill.capacity, 0u);
  for (StepId id = 2; id < 20000; id += 2) {
    ASSERT_FALSE(ready.empty());
    ASSERT_EQ(ready.top(), id);
    ready.pop();
  }
  EXPECT_TRUE(ready.empty());
}

TEST(ReadySteps, AStepOffTheRunTurnsItIntoAnArrayInOrder) {
  ReadySteps ready;
  ReadySpill spill;
  for (StepId id : {3u, 6u, 9u, 12u})
    ready.push(id, spill);
  ready.pop();            // 3
  ready.push(13, spill);  // above the last, off the stride: a sorted array
  EXPECT_EQ(ready.stored(), 4u);
  ready.push(7, spill);  // below the last: a heap
  EXPECT_EQ(ready.stored(), 5u);
  std::vector<StepId> taken;
  while (!ready.empty()) {
    taken.push_back(ready.top());
    ready.pop();
  }
  EXPECT_EQ(taken, (std::vector<StepId>{6, 7, 9, 12, 13}));
  // Empty again: a new run, no storage in use.
  ready.push(40, spill);
  ready.push(50, spill);
  EXPECT_EQ(ready.stored(), 0u);
  EXPECT_EQ(ready.top(), 40u);
}

TEST(ReadySteps, TakesLowestFirstLikeAHeapUnderRandomPushesAndPops) {
  std::mt19937 rng(7);
  ReadySteps ready;
  ReadySpill spill;
  std::priority_queue<StepId, std::vector<StepId>, std::greater<>> reference;
  StepId next = 0;
  for (int op = 0; op < 200000; ++op) {
    const unsigned r = rng() % 8;
    if (r < 4 || reference.empty()) {
      // Mostly increasing ids with a few strides, sometimes lower ones.
      StepId id;
      if (r == 0)
        id = next > 50 ? next - 1 - rng() % 50 : next;
      else
        id = next += 1 + (r == 1 ? rng() % 5 : 2);
      ready.push(id, spill);
      reference.push(id);
    } else {
      ASSERT_FALSE(ready.empty()) << op;
      ASSERT_EQ(ready.top(), reference.top()) << op;
      ready.pop();
      reference.pop();
    }
    ASSERT_EQ(ready.empty(), reference.empty()) << op;
  }
  while (!reference.empty()) {
    ASSERT_EQ(ready.top(), reference.top());
    ready.pop();
    reference.pop();
  }
  EXPECT_TRUE(ready.empty());
}

}  // namespace
}  // namespace grove::sched
