#include "coll/alltoall.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <numeric>
#include <random>
#include <string>

#include "coll/alltoallv.hpp"
#include "core/params.hpp"
#include "grove/error.hpp"
#include "harness.hpp"
#include "support/auto_choice.hpp"

namespace grove::coll {
namespace {

using testing::RankIo;

// Rank r's block for rank j: pattern keyed by (r, j).
std::vector<std::byte> block_of(int from, int to, size_t length) {
  return testing::pattern_bytes(from, length, static_cast<uint32_t>(to) + 1);
}

void check_alltoall(const std::string& name,
                    const std::function<sched::Schedule(const AlltoallArgs&)>& build, int n,
                    size_t b, bool in_place, uint64_t hash) {
  SCOPED_TRACE(::testing::Message()
               << name << " N=" << n << " block=" << b << (in_place ? " in place" : ""));
  const size_t total = b * static_cast<size_t>(n);
  std::vector<RankIo> io(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    std::vector<std::byte> send;
    for (int j = 0; j < n; ++j) {
      const auto blk = block_of(r, j, b);
      send.insert(send.end(), blk.begin(), blk.end());
    }
    RankIo& mine = io[static_cast<size_t>(r)];
    if (in_place) {
      mine.output = send;
    } else {
      mine.input = send;
      mine.output.assign(total, std::byte{0xEE});
    }
  }
  const std::string error = testing::run_built(
      n,
      [&](int r) {
        return build(AlltoallArgs{r, n, b, in_place});
      },
      io, testing::world_options(hash));
  ASSERT_EQ(error, "");
  for (int r = 0; r < n; ++r) {
    std::vector<std::byte> want;
    for (int i = 0; i < n; ++i) {
      const auto blk = block_of(i, r, b);
      want.insert(want.end(), blk.begin(), blk.end());
    }
    ASSERT_EQ(testing::first_difference(io[static_cast<size_t>(r)].output, want), -1)
        << "rank " << r;
  }
}

std::function<sched::Schedule(const AlltoallArgs&)> with(const std::string& algorithm,
                                                         uint32_t posts) {
  return [=](AlltoallArgs a) {
    a.algorithm = parse_algorithm("alltoall", algorithm);
    a.posts = posts;
    return build_alltoall(a);
  };
}

TEST(Alltoall, EveryAlgorithmSizeAndRankCount) {
  const std::vector<std::pair<std::string, std::function<sched::Schedule(const AlltoallArgs&)>>>
      algorithms = {
          {"linear", with("linear", 0)},       {"pairwise:auto", with("pairwise", 0)},
          {"pairwise:1", with("pairwise", 1)}, {"pairwise:3", with("pairwise", 3)},
          {"bruck", with("bruck", 0)},         {"auto", with("auto", 0)},
      };
  uint64_t hash = 0;
  for (const auto& [name, build] : algorithms) {
    for (int n : {1, 2, 3, 4, 5, 7, 8, 9, 16}) {
      const size_t big = (size_t{1} << 20) / static_cast<size_t>(n) + 1;
      for (size_t b : {size_t{0}, size_t{1}, size_t{3}, size_t{257}, big}) {
        for (bool in_place : {false, true}) {
          if (b == big && in_place != (n % 2 == 0)) continue;  // one variant for the big size
          check_alltoall(name, build, n, b, in_place, hash++);
        }
      }
    }
  }
}

TEST(Alltoall, PairwiseHoldsThePostingDepth) {
  for (uint32_t posts : {1u, 2u, 5u}) {
    const int n = 9;
    const size_t b = 64;
    std::vector<RankIo> io(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) {
      io[static_cast<size_t>(r)].input = testing::pattern_bytes(r, b * n);
      io[static_cast<size_t>(r)].output.resize(b * n);
    }
    // Rendezvous: a send stays incomplete until its receive is matched.
    MemoryWorld::Options options;
    options.send_mode = MemoryWorld::SendMode::rendezvous;
    const std::string error = testing::run_built(
        n,
        [&](int r) {
          return build_alltoall(
              AlltoallArgs{r, n, b, false, parse_algorithm("alltoall", "pairwise"), posts});
        },
        io, options,
        [&](MemoryWorld& world) {
          for (int r = 0; r < n; ++r) {
            EXPECT_LE(world.stats(r).max_sends_in_flight, posts) << "rank " << r;
            EXPECT_LE(world.stats(r).max_recvs_in_flight, posts) << "rank " << r;
          }
        });
    ASSERT_EQ(error, "") << "posts=" << posts;
  }
}

TEST(Alltoallv, PairwiseWithZeroAndUnevenCounts) {
  uint64_t hash = 0;
  for (int n : {1, 2, 3, 4, 5, 7, 8, 9, 16}) {
    for (int pattern = 0; pattern < 4; ++pattern) {
      // counts[i][j]: bytes rank i sends to rank j.
      std::mt19937 rng(static_cast<unsigned>(n * 10 + pattern));
      std::vector<std::vector<size_t>> counts(static_cast<size_t>(n),
                                              std::vector<size_t>(static_cast<size_t>(n)));
      for (auto& row : counts) {
        for (auto& c : row) {
          switch (pattern) {
            case 0:
              c = 0;
              break;
            case 1:
              c = rng() % 3 == 0 ? 0 : rng() % 200;
              break;
            case 2:
              c = (size_t{1} << 20) / static_cast<size_t>(n) + rng() % 7;
              break;
            default:
              c = rng() % 2;
          }
        }
      }
      for (bool gapped : {false, true}) {
        for (uint32_t posts : {0u, 2u}) {
          SCOPED_TRACE(::testing::Message() << "N=" << n << " pattern=" << pattern
                                            << (gapped ? " gapped" : "") << " posts=" << posts);
          std::vector<AlltoallvArgs> args(static_cast<size_t>(n));
          std::vector<RankIo> io(static_cast<size_t>(n));
          for (int r = 0; r < n; ++r) {
            AlltoallvArgs& a = args[static_cast<size_t>(r)];
            a.rank = r;
            a.size = n;
            a.algorithm = parse_algorithm("alltoallv", "auto");
            a.posts = posts;
            size_t send_at = gapped ? 5 : 0, recv_at = gapped ? 1 : 0;
            for (int j = 0; j < n; ++j) {
              a.send_counts.push_back(counts[static_cast<size_t>(r)][static_cast<size_t>(j)]);
              a.recv_counts.push_back(counts[static_cast<size_t>(j)][static_cast<size_t>(r)]);
              if (gapped) {
                a.send_offsets.push_back(send_at);
                a.recv_offsets.push_back(recv_at);
                send_at += a.send_counts.back() + 2;
                recv_at += a.recv_counts.back() + 4;
              } else {
                send_at += a.send_counts.back();
                recv_at += a.recv_counts.back();
              }
            }
            RankIo& mine = io[static_cast<size_t>(r)];
            mine.input.assign(send_at, std::byte{0});
            mine.output.assign(recv_at, std::byte{0xEE});
            for (int j = 0; j < n; ++j) {
              const auto blk = block_of(r, j, a.send_counts[static_cast<size_t>(j)]);
              const size_t at = gapped ? a.send_offsets[static_cast<size_t>(j)]
                                       : std::accumulate(a.send_counts.begin(),
                                                         a.send_counts.begin() + j, size_t{0});
              std::copy(blk.begin(), blk.end(), mine.input.begin() + static_cast<ptrdiff_t>(at));
            }
          }
          const std::string error = testing::run_built(
              n, [&](int r) { return build_alltoallv(args[static_cast<size_t>(r)]); }, io,
              testing::world_options(hash++));
          ASSERT_EQ(error, "");
          for (int r = 0; r < n; ++r) {
            const AlltoallvArgs& a = args[static_cast<size_t>(r)];
            std::vector<std::byte> want(io[static_cast<size_t>(r)].output.size(), std::byte{0xEE});
            for (int i = 0; i < n; ++i) {
              const auto blk = block_of(i, r, a.recv_counts[static_cast<size_t>(i)]);
              const size_t at = gapped ? a.recv_offsets[static_cast<size_t>(i)]
                                       : std::accumulate(a.recv_counts.begin(),
                                                         a.recv_counts.begin() + i, size_t{0});
              std::copy(blk.begin(), blk.end(), want.begin() + static_cast<ptrdiff_t>(at));
            }
            ASSERT_EQ(testing::first_difference(io[static_cast<size_t>(r)].output, want), -1)
                << "rank " << r;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace grove::coll

namespace grove::coll {
namespace {

TEST(Alltoall, PostingDepthParameter) {
  EXPECT_EQ(alltoall_posting_depth(64, 16 << 20, uint64_t{64} << 24), 1u);  // the rule
  {
    params::ScopedSet posts("alltoall_posts", "6");
    EXPECT_EQ(alltoall_posting_depth(64, 16 << 20, uint64_t{64} << 24), 6u);
    EXPECT_EQ(alltoall_posting_depth(4, 16, 64), 4u);
    const auto s = build_alltoall(
        AlltoallArgs{0, 16, 1 << 20, false, parse_algorithm("alltoall", "pairwise"), 0});
    EXPECT_EQ(s.max_sends, 6u);
    EXPECT_EQ(s.max_recvs, 6u);
  }
  EXPECT_THROW(params::Registry::global().set("alltoall_posts", "0", params::Source::api), Error);
  EXPECT_THROW(params::Registry::global().set("alltoall_posts", "many", params::Source::api),
               Error);
  EXPECT_EQ(resolved(AlltoallArgs{0, 8, 256, false, {}}).name, "bruck");
  EXPECT_EQ(resolved(AlltoallArgs{0, 7, 256, false, {}}).name, "linear");
  EXPECT_EQ(resolved(AlltoallArgs{0, 8, 257, false, {}}).name, "linear");
  EXPECT_EQ(resolved(AlltoallArgs{0, 8, 32768, false, {}}).name, "pairwise");
}

}  // namespace
}  // namespace grove::coll
