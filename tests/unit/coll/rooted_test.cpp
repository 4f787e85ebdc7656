// Scatter and gather: every algorithm, rank count, root and size.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "coll/gather.hpp"
#include "coll/scatter.hpp"
#include "grove/error.hpp"
#include "harness.hpp"

namespace grove::coll {
namespace {

using testing::RankIo;

const int kRankCounts[] = {1, 2, 3, 4, 5, 7, 8, 9, 16};

std::vector<size_t> blocks_for(int n) {
  // 0, 1, odd, and > 1 MiB in the root's buffer.
  return {0, 1, 13, 1000, (size_t{1} << 20) / static_cast<size_t>(n) + 5};
}

TEST(Scatter, EveryAlgorithmRootAndSize) {
  std::vector<std::string> algorithms = algorithm_examples("scatter");
  algorithms.push_back("auto");
  uint64_t hash = 0;
  for (const std::string& name : algorithms) {
    for (int n : kRankCounts) {
      for (int root = 0; root < n; ++root) {
        for (size_t block : blocks_for(n)) {
          // All roots at the small sizes; the big size at three roots.
          if (block > 1000 && root != 0 && root != n - 1 && root != n / 2) continue;
          SCOPED_TRACE(::testing::Message()
                       << name << " N=" << n << " root=" << root << " block=" << block);
          std::vector<RankIo> io(static_cast<size_t>(n));
          io[static_cast<size_t>(root)].input =
              testing::pattern_bytes(root, block * static_cast<size_t>(n));
          for (auto& mine : io)
            mine.output.assign(block, std::byte{0xEE});
          const std::string error = testing::run_built(
              n,
              [&](int r) {
                return build_scatter(
                    ScatterArgs{r, n, root, block, parse_algorithm("scatter", name)});
              },
              io, testing::world_options(hash++));
          ASSERT_EQ(error, "");
          for (int r = 0; r < n; ++r) {
            ASSERT_EQ(testing::first_difference(
                          io[static_cast<size_t>(r)].output,
                          testing::pattern_bytes(root, block, 0, block * static_cast<size_t>(r))),
                      -1)
                << "rank " << r;
          }
        }
      }
    }
  }
}

TEST(Gather, EveryAlgorithmRootAndSize) {
  std::vector<std::string> algorithms = algorithm_examples("gather");
  for (const char* extra : {"kary:2", "kary:3", "kary:64", "auto"})
    algorithms.emplace_back(extra);
  uint64_t hash = 0;
  for (const std::string& name : algorithms) {
    for (int n : kRankCounts) {
      for (int root = 0; root < n; ++root) {
        for (size_t block : blocks_for(n)) {
          if (block > 1000 && root != 0 && root != n - 1 && root != n / 2) continue;
          SCOPED_TRACE(::testing::Message()
                       << name << " N=" << n << " root=" << root << " block=" << block);
          std::vector<RankIo> io(static_cast<size_t>(n));
          std::vector<std::byte> want;
          for (int r = 0; r < n; ++r) {
            io[static_cast<size_t>(r)].input = testing::pattern_bytes(r, block);
            want.insert(want.end(), io[static_cast<size_t>(r)].input.begin(),
                        io[static_cast<size_t>(r)].input.end());
          }
          io[static_cast<size_t>(root)].output.assign(block * static_cast<size_t>(n),
                                                      std::byte{0xEE});
          const std::string error = testing::run_built(
              n,
              [&](int r) {
                return build_gather(GatherArgs{r, n, root, block, parse_algorithm("gather", name)});
              },
              io, testing::world_options(hash++));
          ASSERT_EQ(error, "");
          ASSERT_EQ(testing::first_difference(io[static_cast<size_t>(root)].output, want), -1);
        }
      }
    }
  }
}

}  // namespace
}  // namespace grove::coll

namespace grove::coll {
namespace {

TEST(Rooted, RejectBadArguments) {
  EXPECT_THROW(build_scatter(ScatterArgs{0, 4, 4, 8, parse_algorithm("scatter", "flat")}), Error);
  EXPECT_THROW(build_gather(GatherArgs{4, 4, 0, 8, parse_algorithm("gather", "flat")}), Error);
  EXPECT_THROW(build_gather(GatherArgs{0, 4, 0, 8, parse_algorithm("scatter", "flat")}), Error);
  EXPECT_THROW(parse_algorithm("gather", "kary:1"), Error);
  EXPECT_THROW(parse_algorithm("scatter", "kary"), Error);
}

}  // namespace
}  // namespace grove::coll
