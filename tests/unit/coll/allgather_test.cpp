#include "coll/allgather.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "core/params.hpp"
#include "grove/error.hpp"
#include "harness.hpp"
#include "support/auto_choice.hpp"

namespace grove::coll {
namespace {

using testing::RankIo;

using Builder = std::function<sched::Schedule(const AllgatherArgs&)>;

struct Algorithm {
  std::string name;
  Builder build;
};

Builder with(const std::string& algorithm) {
  return [algorithm](AllgatherArgs a) {
    a.algorithm = parse_algorithm("allgather", algorithm);
    return build_allgather(a);
  };
}

// gather_bcast at other radices than the defaults.
Builder gather_bcast_at(const char* rollup, const char* release) {
  return [=](AllgatherArgs a) {
    params::ScopedSet up("rollup_radix", rollup);
    params::ScopedSet down("release_radix", release);
    a.algorithm = parse_algorithm("allgather", "gather_bcast");
    return build_allgather(a);
  };
}

std::vector<Algorithm> algorithms() {
  return {
      {"ring", with("ring")},
      {"recursive_doubling", with("recursive_doubling")},
      {"bruck", with("bruck")},
      {"neighbor_exchange", with("neighbor_exchange")},
      {"gather_bcast", with("gather_bcast")},
      {"gather_bcast:2:3", gather_bcast_at("2", "3")},
      {"auto", with("auto")},
  };
}

void check_allgather(const Algorithm& algorithm, int n, size_t block, bool in_place,
                     uint64_t hash) {
  SCOPED_TRACE(::testing::Message() << algorithm.name << " N=" << n << " block=" << block
                                    << (in_place ? " in place" : ""));
  const size_t total = block * static_cast<size_t>(n);
  std::vector<std::byte> want(total);
  for (int r = 0; r < n; ++r) {
    const auto mine = testing::pattern_bytes(r, block);
    std::copy(mine.begin(), mine.end(), want.begin() + static_cast<ptrdiff_t>(r * block));
  }
  std::vector<RankIo> io(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    RankIo& mine = io[static_cast<size_t>(r)];
    mine.output.assign(total, std::byte{0xEE});
    const auto own = testing::pattern_bytes(r, block);
    if (in_place)
      std::copy(own.begin(), own.end(), mine.output.begin() + static_cast<ptrdiff_t>(r * block));
    else
      mine.input = own;
  }
  const std::string error = testing::run_built(
      n,
      [&](int r) {
        AllgatherArgs args;
        args.rank = r;
        args.size = n;
        args.block_bytes = block;
        args.in_place = in_place;
        return algorithm.build(args);
      },
      io, testing::world_options(hash));
  ASSERT_EQ(error, "");
  for (int r = 0; r < n; ++r) {
    ASSERT_EQ(testing::first_difference(io[static_cast<size_t>(r)].output, want), -1)
        << "rank " << r;
  }
}

TEST(Allgather, EveryAlgorithmSizeAndRankCount) {
  uint64_t hash = 0;
  for (const Algorithm& algorithm : algorithms()) {
    for (int n : {1, 2, 3, 4, 5, 7, 8, 9, 16}) {
      if (algorithm.name == "neighbor_exchange" && n % 2 == 1 && n > 1) continue;
      // > 1 MiB in total at every N.
      const size_t big = (size_t{1} << 20) / static_cast<size_t>(n) + 3;
      for (size_t block : {size_t{0}, size_t{1}, size_t{13}, size_t{4096}, big}) {
        for (bool in_place : {false, true})
          check_allgather(algorithm, n, block, in_place, hash++);
      }
    }
  }
}

TEST(Allgather, NeighborExchangeRejectsOddSizes) {
  AllgatherArgs args;
  args.size = 5;
  args.block_bytes = 8;
  args.algorithm = parse_algorithm("allgather", "neighbor_exchange");
  try {
    build_allgather(args);
    FAIL() << "odd size accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("even number of ranks"), std::string::npos);
  }
}

}  // namespace
}  // namespace grove::coll

namespace grove::coll {
namespace {

TEST(Allgather, AutoFollowsTheDocumentedThresholds) {
  EXPECT_EQ(resolved(AllgatherArgs{0, 8, 1024, false, {}}).name, "recursive_doubling");
  EXPECT_EQ(resolved(AllgatherArgs{0, 8, 524288 / 8 - 1, false, {}}).name, "recursive_doubling");
  EXPECT_EQ(resolved(AllgatherArgs{0, 8, 524288 / 8, false, {}}).name,
            "ring");  // n = 512 KiB: not below
  EXPECT_EQ(resolved(AllgatherArgs{0, 7, 1024, false, {}}).name, "bruck");
  EXPECT_EQ(resolved(AllgatherArgs{0, 7, 81920 / 7 + 1, false, {}}).name, "ring");
  EXPECT_EQ(describe_allgather(parse_algorithm("allgather", "gather_bcast")),
            "gather_bcast(rollup=64,release=4)");
  EXPECT_EQ(describe_allgather(parse_algorithm("allgather", "ring")), "ring");
}

}  // namespace
}  // namespace grove::coll
