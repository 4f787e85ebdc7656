#include "coll/posting_depth.hpp"

#include <gtest/gtest.h>

#include "grove/error.hpp"

namespace grove::coll {
namespace {

constexpr uint64_t KiB = 1024;
constexpr uint64_t MiB = 1024 * KiB;

// Alltoall: every peer gets the same block, so the whole send buffer is N
// blocks.
uint32_t depth(uint32_t n, uint64_t peer_bytes) {
  return auto_posting_depth(n, peer_bytes, uint64_t{n} * peer_bytes);
}

TEST(PostingDepth, AggregateThresholdIsInclusive) {
  // total_bytes = 66000 still posts everything; one byte more does not.
  EXPECT_EQ(auto_posting_depth(64, 1000, 66000), 64u);
  EXPECT_EQ(auto_posting_depth(64, 1000, 66001), 32u);
  EXPECT_EQ(auto_posting_depth(40, 66000 / 40, 66000), 40u);
  EXPECT_EQ(auto_posting_depth(40, 66001 / 40, 66001), 32u);
}

TEST(PostingDepth, PerPeerThresholdsAreInclusive) {
  const uint32_t n = 64;  // large enough that every branch caps below N
  EXPECT_EQ(depth(n, 64 * KiB), 32u);
  EXPECT_EQ(depth(n, 64 * KiB + 1), 16u);
  EXPECT_EQ(depth(n, 1 * MiB), 16u);
  EXPECT_EQ(depth(n, 1 * MiB + 1), 8u);
  EXPECT_EQ(depth(n, 4 * MiB), 8u);
  EXPECT_EQ(depth(n, 4 * MiB + 1), 4u);
  EXPECT_EQ(depth(n, 8 * MiB), 4u);
  EXPECT_EQ(depth(n, 8 * MiB + 1), 1u);
}

TEST(PostingDepth, TeamsOfAtMostEightPostEverything) {
  for (uint32_t n = 1; n <= 8; ++n) {
    for (uint64_t peer : {uint64_t{0}, 64 * KiB + 1, 4 * MiB + 1, 8 * MiB + 1, 1024 * MiB}) {
      EXPECT_EQ(depth(n, peer), n) << "N=" << n << " peer_bytes=" << peer;
    }
  }
}

TEST(PostingDepth, EightToNineRankTransition) {
  const uint64_t peer = 16 * MiB;  // far above every threshold
  EXPECT_EQ(depth(8, peer), 8u);
  EXPECT_EQ(depth(9, peer), 4u);
  EXPECT_EQ(depth(8, 2 * MiB), 8u);
  EXPECT_EQ(depth(9, 2 * MiB), 9u);
  EXPECT_EQ(depth(8, 6 * MiB), 8u);
  EXPECT_EQ(depth(9, 6 * MiB), 4u);
  EXPECT_EQ(depth(9, 100 * KiB), 9u);
}

TEST(PostingDepth, SixteenToSeventeenRankTransition) {
  // (1 MiB, 4 MiB] per peer: the whole team up to 16 ranks, then 8.
  EXPECT_EQ(depth(16, 1 * MiB + 1), 16u);
  EXPECT_EQ(depth(17, 1 * MiB + 1), 8u);
  EXPECT_EQ(depth(16, 4 * MiB), 16u);
  EXPECT_EQ(depth(17, 4 * MiB), 8u);
  // (64 KiB, 1 MiB]: min(N, 16).
  EXPECT_EQ(depth(16, 1 * MiB), 16u);
  EXPECT_EQ(depth(17, 1 * MiB), 16u);
}

TEST(PostingDepth, ThirtyTwoToThirtyThreeRankTransition) {
  // Above 8 MiB per peer: 4 up to 32 ranks, then 1.
  EXPECT_EQ(depth(32, 8 * MiB + 1), 4u);
  EXPECT_EQ(depth(33, 8 * MiB + 1), 1u);
  // Up to 64 KiB per peer: min(N, 32).
  EXPECT_EQ(depth(32, 64 * KiB), 32u);
  EXPECT_EQ(depth(33, 64 * KiB), 32u);
  EXPECT_EQ(depth(33, 4 * KiB), 32u);  // total 135168 > 66000
}

TEST(PostingDepth, RangeAndMonotonicity) {
  // Sizes around every threshold plus a geometric sweep.
  std::vector<uint64_t> sizes = {0, 1, 2};
  for (uint64_t s = 3; s < 64 * MiB; s = s * 3 / 2 + 1)
    sizes.push_back(s);
  for (uint64_t edge : {64 * KiB, 1 * MiB, 4 * MiB, 8 * MiB}) {
    sizes.push_back(edge - 1);
    sizes.push_back(edge);
    sizes.push_back(edge + 1);
  }
  std::sort(sizes.begin(), sizes.end());
  for (uint32_t n = 1; n <= 300; ++n) {
    for (uint64_t s : {uint64_t{66000} / n, uint64_t{66000} / n + 1})
      sizes.push_back(s);
    std::sort(sizes.begin(), sizes.end());
    uint32_t previous = n;
    for (uint64_t peer : sizes) {
      const uint32_t p = depth(n, peer);
      ASSERT_GE(p, 1u) << "N=" << n << " peer_bytes=" << peer;
      ASSERT_LE(p, n) << "N=" << n << " peer_bytes=" << peer;
      ASSERT_LE(p, previous) << "depth grew with peer_bytes at N=" << n << " peer_bytes=" << peer;
      previous = p;
    }
  }
}

TEST(PostingDepth, ExplicitSettingIsAuthoritative) {
  EXPECT_EQ(parse_posting_depth("auto", "alltoall_posts"), std::nullopt);
  EXPECT_EQ(parse_posting_depth("3", "alltoall_posts"), 3u);
  // An explicit 2 holds where the rule would post everything...
  EXPECT_EQ(resolve_posting_depth(2u, 8, 10, 80), 2u);
  // ...and an explicit 64 where the rule would post one at a time; above N
  // it is capped at N (there are only N transfers).
  EXPECT_EQ(resolve_posting_depth(64u, 100, 16 * MiB, 1600 * MiB), 64u);
  EXPECT_EQ(resolve_posting_depth(64u, 16, 16 * MiB, 256 * MiB), 16u);
  EXPECT_EQ(resolve_posting_depth(std::nullopt, 100, 16 * MiB, 1600 * MiB), 1u);
}

TEST(PostingDepth, BadSettingsNameTheParameter) {
  for (const char* bad : {"", "0", "-1", "x", "4x", "auto "}) {
    try {
      parse_posting_depth(bad, "alltoall_posts");
      FAIL() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::invalid_parameter);
      EXPECT_NE(std::string(e.what()).find("alltoall_posts"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace grove::coll
