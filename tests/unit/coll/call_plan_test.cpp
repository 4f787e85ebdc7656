#include "api/call_plan.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/params.hpp"

namespace grove::detail {
namespace {

std::shared_ptr<CallPlan> plan_of(const CallShape& shape, const char* algorithm) {
  auto plan = std::make_shared<CallPlan>();
  plan->shape = shape;
  for (size_t i = 0; i < shape.lists.size(); ++i) {
    plan->list_storage[i].assign(shape.lists[i].begin(), shape.lists[i].end());
    plan->shape.lists[i] = plan->list_storage[i];
  }
  plan->algorithm = algorithm;
  return plan;
}

CallShape bcast(int root, uint64_t bytes) {
  return CallShape{.collective = Collective::bcast, .root = root, .count = bytes};
}

TEST(CallShape, ComparesEveryFieldAndListsByValue) {
  EXPECT_EQ(bcast(0, 8), bcast(0, 8));
  EXPECT_NE(bcast(0, 8), bcast(1, 8));
  EXPECT_NE(bcast(0, 8), bcast(0, 9));
  CallShape a{.collective = Collective::allreduce, .dtype = Datatype::int32, .count = 4};
  CallShape b = a;
  b.op = ReduceOp::max;
  EXPECT_NE(a, b);
  b = a;
  b.in_place = true;
  EXPECT_NE(a, b);

  const std::vector<size_t> x{1, 2, 3}, y{1, 2, 3}, z{1, 2, 4};
  CallShape v1{.collective = Collective::allgatherv, .lists = {x}};
  CallShape v2{.collective = Collective::allgatherv, .lists = {y}};
  CallShape v3{.collective = Collective::allgatherv, .lists = {z}};
  CallShape v4{.collective = Collective::allgatherv};
  v4.lists[1] = x;
  EXPECT_EQ(v1, v2);
  EXPECT_EQ(CallShapeHash{}(v1), CallShapeHash{}(v2));
  EXPECT_NE(v1, v3);
  EXPECT_NE(v1, v4);  // the same values in another list
}

TEST(PlanCache, FindsByShapeAndCountsHitsAndMisses) {
  PlanCache cache;
  EXPECT_EQ(cache.find(bcast(0, 8)), nullptr);
  cache.insert(plan_of(bcast(0, 8), "binomial"));
  cache.insert(plan_of(bcast(1, 8), "flat"));
  ASSERT_NE(cache.find(bcast(0, 8)), nullptr);
  EXPECT_EQ((*cache.find(bcast(0, 8)))->algorithm, "binomial");
  EXPECT_EQ((*cache.find(bcast(1, 8)))->algorithm, "flat");
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.hits(), 3u);
  EXPECT_EQ(cache.misses(), 1u);
}

TEST(PlanCache, ReplacesAPlanOfTheSameShape) {
  PlanCache cache;
  cache.insert(plan_of(bcast(0, 8), "binomial"));
  cache.insert(plan_of(bcast(2, 8), "chain"));
  cache.insert(plan_of(bcast(0, 8), "flat"));
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ((*cache.find(bcast(0, 8)))->algorithm, "flat");
}

TEST(PlanCache, KeepsListsOfItsOwn) {
  PlanCache cache;
  std::vector<size_t> counts{4, 0, 2};
  cache.insert(plan_of(CallShape{.collective = Collective::alltoallv, .lists = {counts}}, "p"));
  counts[0] = 5;  // the caller's list changes; the cached key does not
  EXPECT_EQ(cache.find(CallShape{.collective = Collective::alltoallv, .lists = {counts}}), nullptr);
  const std::vector<size_t> original{4, 0, 2};
  EXPECT_NE(cache.find(CallShape{.collective = Collective::alltoallv, .lists = {original}}),
            nullptr);
}

TEST(PlanCache, EvictsTheLeastRecentlyUsed) {
  params::ScopedSet bound("schedule_cache_size", "2");
  PlanCache cache;
  cache.insert(plan_of(bcast(0, 1), "a"));
  cache.insert(plan_of(bcast(0, 2), "b"));
  ASSERT_NE(cache.find(bcast(0, 1)), nullptr);  // now a is the most recent
  cache.insert(plan_of(bcast(0, 3), "c"));      // evicts b
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_NE(cache.find(bcast(0, 1)), nullptr);
  EXPECT_EQ(cache.find(bcast(0, 2)), nullptr);
  EXPECT_NE(cache.find(bcast(0, 3)), nullptr);
}

// A loop that alternates calls (a barrier before each collective, say) finds
// each plan a step or two behind the front; every hit, near the front or
// deeper, makes its plan the most recent, so eviction order stays exact.
TEST(PlanCache, AlternatingCallsFindTheirPlansAndMoveThemToTheFront) {
  PlanCache cache;
  const std::vector<std::string> names{"p1", "p2", "p3", "p4", "p5", "p6"};
  for (uint64_t i = 1; i <= 6; ++i)
    cache.insert(plan_of(bcast(0, i), names[i - 1].c_str()));  // front: p6 p5 p4 p3 p2 p1
  for (int round = 0; round < 3; ++round) {
    ASSERT_NE(cache.find(bcast(0, 5)), nullptr);
    EXPECT_EQ(cache.most_recent()->algorithm, "p5");
    ASSERT_NE(cache.find(bcast(0, 6)), nullptr);
    EXPECT_EQ(cache.most_recent()->algorithm, "p6");
  }
  ASSERT_NE(cache.find(bcast(0, 1)), nullptr);  // the back: beyond the few compared first
  EXPECT_EQ(cache.most_recent()->algorithm, "p1");
  EXPECT_EQ(cache.hits(), 7u);
  EXPECT_EQ(cache.misses(), 0u);
  // Recency now: p1 p6 p5 p4 p3 p2. A bound of 3 keeps the new plan, p1, p6.
  params::ScopedSet bound("schedule_cache_size", "3");
  cache.insert(plan_of(bcast(0, 7), "p7"));
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_NE(cache.find(bcast(0, 1)), nullptr);
  EXPECT_NE(cache.find(bcast(0, 6)), nullptr);
  EXPECT_EQ(cache.find(bcast(0, 5)), nullptr);
  EXPECT_EQ(cache.find(bcast(0, 2)), nullptr);
}

}  // namespace
}  // namespace grove::detail
