// The fence protocol on MemoryWorld: failure-free results, direct release
// edges, and departures at chosen message steps (src/runtime/fence_engine.hpp).

#include <gtest/gtest.h>

#include <cstdlib>
#include <random>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "grove/error.hpp"
#include "topo/live_tree.hpp"
#include "unit/runtime/fence_world.hpp"

namespace grove::testing {
namespace {

using runtime::FenceConfig;
using runtime::FenceKind;

TEST(FenceProtocol, FailureFreeEverySizeAndShape) {
  const std::vector<FenceConfig> shapes = {
      fence_config(64, 4), fence_config(2, 2),         fence_config(3, 2),       fence_config(4, 3),
      fence_config(2, 5),  fence_config(64, 4, false), fence_config(2, 4, false)};
  for (int n : {1, 2, 3, 4, 5, 7, 8, 13, 17, 33}) {
    for (const FenceConfig& c : shapes) {
      SCOPED_TRACE(fmt::format("n={} {}", n, c.describe()));
      FenceWorld w(n, c);
      w.start_all();
      w.start_all();  // the second waits until the first is held (deferred)
      w.drive_all();
      EXPECT_EQ(w.verify(0), "");
      EXPECT_EQ(w.verify(1), "");
      for (int r = 0; r < n; ++r)
        EXPECT_EQ(w.engine(r).release_stats().replays, 0u) << "rank " << r;
    }
  }
}

TEST(FenceProtocol, ShuffledArrivalsManyGenerations) {
  MemoryWorld::Options options;
  options.seed = 99;
  FenceWorld w(11, fence_config(3, 2), options);
  for (int g = 0; g < 6; ++g)
    w.start_all();
  w.drive_all();
  for (int g = 0; g < 6; ++g)
    EXPECT_EQ(w.verify(static_cast<uint64_t>(g)), "") << "generation " << g;
}

// The release travels the derived tree's own edges, sent directly from a
// relay to its release children (not relayed through the routing tree);
// with low_radix_release off it travels the routing tree's edges.
TEST(FenceProtocol, ReleaseEdgesAreTheTreesEdges) {
  for (bool low : {true, false}) {
    FenceWorld w(16, fence_config(64, 2, low));
    w.start_all();
    w.drive_all();
    ASSERT_EQ(w.verify(0), "");
    w.drive([&] {
      for (int r = 0; r < 16; ++r)
        if (!w.engine(r).quiescent()) return false;
      return true;
    });
    const topo::LiveTree tree(16, 0, {}, low ? 2 : 64);
    int releases = 0, acks = 0;
    for (const SentMessage& m : w.log()) {
      if (m.kind == FenceKind::release) {
        ++releases;
        EXPECT_EQ(m.topology, low ? tag::Topology::release : tag::Topology::routing);
        EXPECT_EQ(tree.parent(m.to), m.from) << m.from << " -> " << m.to;
      } else if (m.kind == FenceKind::ack) {
        ++acks;
        EXPECT_EQ(tree.parent(m.from), m.to) << m.from << " -> " << m.to;
      } else {
        EXPECT_EQ(m.topology, tag::Topology::routing);
      }
    }
    EXPECT_EQ(releases, 15);
    EXPECT_EQ(acks, 15);
  }
}

// How many active messages `rank` sends in a failure-free run of `fences`.
size_t sends_of(int n, const FenceConfig& c, int rank, int fences) {
  FenceWorld w(n, c);
  for (int g = 0; g < fences; ++g)
    w.start_all();
  w.drive_all();
  size_t count = 0;
  for (const SentMessage& m : w.log())
    if (m.from == rank) ++count;
  return count;
}

// Kill `victim` after each of its message steps (0 .. all its sends) during
// two fences; `root_only`: only the root hears of it from the "launcher",
// every other rank must learn it from the root's relay.
void kill_at_every_step(int n, const FenceConfig& c, int victim, bool root_only) {
  const size_t steps = sends_of(n, c, victim, 2);
  for (size_t k = 0; k <= steps; ++k) {
    SCOPED_TRACE(fmt::format("n={} {} victim {} after {} sends{}", n, c.describe(), victim, k,
                             root_only ? " (root told only)" : ""));
    FenceWorld w(n, c);
    w.start_all();
    w.start_all();
    w.tap(victim).cut_after(k);
    if (root_only && k < steps) {
      // Depart quietly, then tell only the first living rank.
      w.drive([&] { return !w.alive(victim); }, 100000, true);
      w.tell(victim == 0 ? 1 : 0);
    }
    w.drive_all();
    EXPECT_EQ(w.verify(0), "");
    EXPECT_EQ(w.verify(1), "");
  }
}

TEST(FenceProtocol, ReleaseRelayKilledAtEveryStep) {
  const FenceConfig c = fence_config(64, 2);
  for (int victim : {1, 2, 3})
    for (bool root_only : {false, true})
      kill_at_every_step(8, c, victim, root_only);
}

TEST(FenceProtocol, RoutingRelayKilledAtEveryStep) {
  const FenceConfig c = fence_config(2, 3);
  for (int victim : {1, 2, 4})
    for (bool root_only : {false, true})
      kill_at_every_step(12, c, victim, root_only);
}

TEST(FenceProtocol, RoutingTreeReleaseRelayKilledAtEveryStep) {
  const FenceConfig c = fence_config(2, 4, false);
  for (int victim : {1, 2})
    kill_at_every_step(9, c, victim, false);
}

// The root itself: survivors must still agree, byte for byte (a result that
// escaped the dead root is carried up to the new root and replayed).
TEST(FenceProtocol, RootKilledAtEveryStep) {
  kill_at_every_step(8, fence_config(64, 2), 0, false);
  kill_at_every_step(10, fence_config(2, 3), 0, false);
  kill_at_every_step(7, fence_config(3, 3), 0, true);
}

TEST(FenceProtocol, SeededDoubleAndTripleFailures) {
  // FENCE_TRIALS (environment) runs more for a soak; 300 in CI.
  const char* more = std::getenv("FENCE_TRIALS");
  const int trials = more ? std::atoi(more) : 300;
  std::mt19937_64 rng(12345);
  for (int trial = 0; trial < trials; ++trial) {
    const int n = 4 + static_cast<int>(rng() % 14);
    const int routing = 2 + static_cast<int>(rng() % 4);
    const int release = 2 + static_cast<int>(rng() % 3);
    const FenceConfig c = fence_config(routing, release, rng() % 5 != 0);
    MemoryWorld::Options options;
    options.seed = rng() | 1;
    FenceWorld w(n, c, options);
    const auto policy = static_cast<FenceWorld::Notices>(trial % 3);
    w.set_notices(policy, rng(), rng() % 20);
    w.start_all();
    w.start_all();
    const int failures = 2 + static_cast<int>(rng() % 2);
    std::set<int> victims;
    while (static_cast<int>(victims.size()) < failures)
      victims.insert(static_cast<int>(rng() % static_cast<uint64_t>(n)));
    for (int v : victims)
      w.tap(v).cut_after(rng() % 12);
    SCOPED_TRACE(fmt::format("trial {}: n={} {} seed {} victims {} notices {}", trial, n,
                             c.describe(), options.seed, fmt::join(victims, ","),
                             static_cast<int>(policy)));
    w.drive_all();
    EXPECT_EQ(w.verify(0), "");
    EXPECT_EQ(w.verify(1), "");
  }
}

TEST(FenceProtocol, ViewReachesEveryRankThroughTheRootsRelay) {
  FenceWorld w(20, fence_config(3, 2));
  w.start_all();
  w.drive_all();
  w.kill(9, {0});
  w.kill(4, {0});
  w.drive([&] {
    for (int r = 0; r < 20; ++r)
      if (w.alive(r) && w.engine(r).view().version != 2) return false;
    return true;
  });
  for (int r = 0; r < 20; ++r) {
    if (!w.alive(r)) continue;
    EXPECT_EQ(w.engine(r).view().departed, (std::set<int>{4, 9})) << "rank " << r;
  }
  w.start_all();
  w.drive_all();
  EXPECT_EQ(w.verify(1), "");
}

TEST(FenceProtocol, DepartedRanksAreEmptyAndListed) {
  FenceWorld w(6, fence_config(2, 2));
  w.kill(3);
  w.kill(5);
  w.start_all();
  w.drive_all();
  ASSERT_EQ(w.verify(0), "");
  const std::set<int> want{3, 5};
  EXPECT_EQ(std::set<int>(w.engine(0).view().departed), want);
}

}  // namespace
}  // namespace grove::testing
