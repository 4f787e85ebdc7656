#include "coll/bcast.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstring>
#include <memory>
#include <numeric>
#include <set>
#include <vector>

#include "grove/error.hpp"
#include "sched/executor.hpp"
#include "support/memory_world.hpp"

namespace grove::coll {
namespace {

std::byte pattern(size_t i, int root) {
  return static_cast<std::byte>((i * 131 + root * 7 + 1) % 251);
}

// Runs one bcast on a MemoryWorld and checks every rank's bytes exactly.
void run_bcast(int n, int root, size_t bytes, const std::string& algorithm,
               MemoryWorld::Options options) {
  SCOPED_TRACE(fmt::format("bcast {} n={} root={} bytes={} mode={} seed={}", algorithm, n, root,
                           bytes, static_cast<int>(options.send_mode), options.seed));
  MemoryWorld world(n, options);
  std::vector<std::vector<std::byte>> buffers(n);
  std::vector<std::unique_ptr<sched::Execution>> execs;
  const Tag base = tag::make(1, 1, tag::Topology::none, 0, 0);
  for (int r = 0; r < n; ++r) {
    buffers[r].assign(bytes, std::byte{0xEE});
    if (r == root)
      for (size_t i = 0; i < bytes; ++i)
        buffers[r][i] = pattern(i, root);
    BcastArgs args{r, n, root, bytes, parse_algorithm("bcast", algorithm)};
    auto schedule = std::make_shared<const sched::Schedule>(build_bcast(args));
    execs.push_back(std::make_unique<sched::Execution>(
        world.transport(r), schedule, sched::Buffers{nullptr, 0, buffers[r].data(), bytes}, base));
  }
  for (auto& e : execs)
    e->start();
  world.run_until(
      [&] {
        for (auto& e : execs)
          if (!e->done()) return false;
        return true;
      },
      1000000, "bcast");
  const std::vector<std::byte>& expected = buffers[root];
  for (int r = 0; r < n; ++r) {
    ASSERT_FALSE(execs[r]->error()) << execs[r]->error()->what();
    if (bytes > 0 && std::memcmp(buffers[r].data(), expected.data(), bytes) != 0) {
      size_t i = 0;
      while (buffers[r][i] == expected[i])
        ++i;
      ADD_FAILURE() << "rank " << r << " byte " << i << " wrong";
      return;
    }
  }
  for (size_t i = 0; i < std::min<size_t>(bytes, 4096); ++i)
    ASSERT_EQ(expected[i], pattern(i, root)) << "the root's buffer changed at byte " << i;
}

// Every registered algorithm with a schedule, other arguments, and auto.
std::vector<std::string> all_algorithms() {
  std::vector<std::string> out = algorithm_examples("bcast");
  for (const char* extra : {"pipeline:seg=1000", "pipeline:seg=1", "kary:3", "knomial:3", "auto"})
    out.emplace_back(extra);
  return out;
}
const std::vector<std::string> kAlgorithms = all_algorithms();

TEST(Bcast, EveryAlgorithmRootSizeAndLength) {
  const std::vector<MemoryWorld::Options> modes{
      {0, MemoryWorld::SendMode::eager},
      {11, MemoryWorld::SendMode::rendezvous},
      {0, MemoryWorld::SendMode::immediate},
      {23, MemoryWorld::SendMode::eager},
  };
  int variant = 0;
  for (int n : {1, 2, 3, 4, 5, 7, 8, 13, 16}) {
    std::set<int> roots{0, n - 1, n / 2};
    for (int root : roots) {
      for (size_t bytes : {size_t{0}, size_t{1}, size_t{7}, size_t{4096}, size_t{(1 << 20) + 3}}) {
        for (const std::string& algorithm : kAlgorithms) {
          // 1-byte segments of a megabyte are a stress test, not a case.
          if (algorithm == "pipeline:seg=1" && bytes > 4096) continue;
          run_bcast(n, root, bytes, algorithm, modes[variant++ % modes.size()]);
          if (HasFailure()) return;
        }
      }
    }
  }
}

// More ranks than pipeline channels and ring channels, so both reuse them.
TEST(Bcast, ChannelsAreReusedSafely) {
  for (const char* algorithm : {"scatter_allgather", "pipeline:seg=1"}) {
    run_bcast(70, 5, 700, algorithm, {3, MemoryWorld::SendMode::rendezvous});
    run_bcast(70, 69, 701, algorithm, {4, MemoryWorld::SendMode::eager});
  }
}

TEST(Bcast, BadArgumentsAreErrors) {
  const AlgorithmSpec binomial = parse_algorithm("bcast", "binomial");
  EXPECT_THROW(build_bcast({0, 0, 0, 8, binomial}), Error);
  EXPECT_THROW(build_bcast({4, 4, 0, 8, binomial}), Error);
  EXPECT_THROW(build_bcast({0, 4, -1, 8, binomial}), Error);
  try {
    build_bcast({0, 4, 0, 8, parse_algorithm("barrier", "flat")});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("barrier"), std::string::npos);
  }
}

TEST(Bcast, AbsurdPipelineSegmentCountIsAnError) {
  try {
    build_bcast({1, 4, 0, 64 << 20, parse_algorithm("bcast", "pipeline:seg=1")});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("larger seg="), std::string::npos);
  }
}

TEST(Bcast, ScheduleNamesItsAlgorithm) {
  const auto s = build_bcast({1, 8, 0, 100, parse_algorithm("bcast", "auto")});
  EXPECT_EQ(s.algorithm, "bcast binomial");
  const auto p = build_bcast({1, 8, 0, 100, parse_algorithm("bcast", "pipeline")});
  EXPECT_EQ(p.algorithm, "bcast pipeline:seg=64KiB");
}

// A 100,000-rank binomial bcast: each rank's schedule holds only its own
// messages, so building all of them is cheap.
TEST(Bcast, HugeBinomialIsBuiltPerRankCheaply) {
  constexpr int kRanks = 100000;
  size_t messages = 0;
  for (int r = 0; r < kRanks; ++r) {
    const auto s = build_bcast({r, kRanks, 777, 1 << 20, parse_algorithm("bcast", "binomial")});
    messages += s.steps.size();
    EXPECT_LE(s.steps.size(), 18u);
  }
  EXPECT_EQ(messages, 2u * (kRanks - 1));
}

}  // namespace
}  // namespace grove::coll
