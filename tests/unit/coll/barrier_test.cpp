#include "coll/barrier.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <memory>
#include <numeric>
#include <set>
#include <vector>

#include "sched/executor.hpp"
#include "support/memory_world.hpp"

namespace grove::coll {
namespace {

// Ranks enter one at a time, with plenty of progress in between: no rank may
// complete before the last one has entered; then all complete.
void check_barrier(int n, const std::string& algorithm, MemoryWorld::Options options) {
  SCOPED_TRACE(fmt::format("barrier {} n={} seed={}", algorithm, n, options.seed));
  MemoryWorld world(n, options);
  const Tag base = tag::make(2, 9, tag::Topology::none, 0, 0);
  std::vector<std::unique_ptr<sched::Execution>> execs;
  for (int r = 0; r < n; ++r) {
    auto schedule = std::make_shared<const sched::Schedule>(
        build_barrier({r, n, parse_algorithm("barrier", algorithm)}));
    for (const sched::Step& step : schedule->steps) {
      EXPECT_EQ(step.src.length, 0u);
      EXPECT_EQ(step.dst.length, 0u);
    }
    execs.push_back(
        std::make_unique<sched::Execution>(world.transport(r), schedule, sched::Buffers{}, base));
  }
  // Enter in a scrambled order so the last to enter is not always rank n-1.
  for (int i = 0; i < n; ++i) {
    const int r = (i * 5 + 3) % n;
    if (std::gcd(5, n) != 1) {
      execs[i]->start();
    } else {
      execs[r]->start();
    }
    if (i + 1 == n) break;
    for (int round = 0; round < 20; ++round)
      world.progress_all();
    for (int q = 0; q < n; ++q)
      ASSERT_FALSE(execs[q]->done()) << "rank " << q << " left before all entered";
  }
  world.run_until(
      [&] {
        for (auto& e : execs)
          if (!e->done()) return false;
        return true;
      },
      100000, "barrier");
  for (auto& e : execs)
    ASSERT_FALSE(e->error()) << e->error()->what();
}

TEST(Barrier, NoRankLeavesBeforeAllEntered) {
  int variant = 0;
  for (int n : {1, 2, 3, 4, 5, 7, 8, 13, 16, 33}) {
    for (const char* algorithm :
         {"dissemination", "knomial:2", "knomial:3", "knomial:4", "flat", "auto"}) {
      const MemoryWorld::SendMode mode = variant % 3 == 0   ? MemoryWorld::SendMode::eager
                                         : variant % 3 == 1 ? MemoryWorld::SendMode::rendezvous
                                                            : MemoryWorld::SendMode::immediate;
      check_barrier(n, algorithm, {static_cast<uint64_t>(variant % 2 ? variant : 0), mode});
      ++variant;
      if (HasFailure()) return;
    }
  }
}

TEST(Barrier, FlatRootHasLinearDependencies) {
  const auto s = build_barrier({0, 10000, parse_algorithm("barrier", "flat")});
  EXPECT_EQ(s.steps.size(), 2u * 9999 + 1);
  EXPECT_LE(s.deps.size(), 3u * 10000);
}

TEST(Barrier, BadArgumentsAreErrors) {
  EXPECT_THROW(build_barrier({3, 3, parse_algorithm("barrier", "flat")}), Error);
  EXPECT_THROW(build_barrier({0, 3, parse_algorithm("bcast", "flat")}), Error);
}

}  // namespace
}  // namespace grove::coll
