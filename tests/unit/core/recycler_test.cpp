#include "core/recycler.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>

#include "core/function_ref.hpp"
#include "core/params.hpp"

namespace grove {
namespace {

struct Payload {
  explicit Payload(int v) : value(v) {}
  int value;
  char padding[60] = {};
};

TEST(Recycler, ReusesTheBlockOfTheLastObjectFreed) {
  RecyclingAllocator<Payload> alloc;
  auto first = std::allocate_shared<Payload>(alloc, 1);
  const void* block = first.get();
  first.reset();
  auto second = std::allocate_shared<Payload>(alloc, 2);
  EXPECT_EQ(second.get(), block);
  EXPECT_EQ(second->value, 2);
}

TEST(Recycler, ManyLiveObjectsAreDistinctAndSurviveReuse) {
  RecyclingAllocator<Payload> alloc;
  for (int round = 0; round < 3; ++round) {
    std::vector<std::shared_ptr<Payload>> live;
    for (int i = 0; i < 100; ++i)
      live.push_back(std::allocate_shared<Payload>(alloc, i));
    for (int i = 0; i < 100; ++i)
      EXPECT_EQ(live[static_cast<size_t>(i)]->value, i);
  }
}

TEST(Recycler, BlocksMayBeFreedOnAnotherThread) {
  RecyclingAllocator<Payload> alloc;
  auto made_here = std::allocate_shared<Payload>(alloc, 7);
  std::thread other([&] {
    made_here.reset();  // joins the other thread's list, freed when it ends
    auto made_there = std::allocate_shared<Payload>(alloc, 8);
    EXPECT_EQ(made_there->value, 8);
  });
  other.join();
  EXPECT_EQ(std::allocate_shared<Payload>(alloc, 9)->value, 9);
}

int apply(FunctionRef<int(int)> f, int x) {
  return f(x);
}

TEST(FunctionRef, CallsLambdasAndFunctionsWithoutCopying) {
  int calls = 0;
  auto counting = [&calls](int x) {
    ++calls;
    return x + 1;
  };
  EXPECT_EQ(apply(counting, 1), 2);
  EXPECT_EQ(apply([](int x) { return x * 3; }, 2), 6);
  EXPECT_EQ(calls, 1);
  FunctionRef<int(int)> empty;
  EXPECT_FALSE(empty);
  EXPECT_TRUE(FunctionRef<int(int)>(counting));
}

TEST(ParamsGeneration, MovesOnEverySetAndReset) {
  const uint64_t start = params::generation();
  {
    params::ScopedSet set("timeout_ms", "4321");
    EXPECT_GT(params::generation(), start);
    const uint64_t during = params::generation();
    params::Registry::global().set("timeout_ms", "4321", params::Source::api);
    EXPECT_GT(params::generation(), during);  // the same value still counts
  }
  const uint64_t after = params::generation();
  EXPECT_GT(after, start);
  EXPECT_EQ(params::generation(), after);  // reads do not move it
}

}  // namespace
}  // namespace grove
