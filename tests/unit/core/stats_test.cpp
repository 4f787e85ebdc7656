#include "core/stats.hpp"

#include <gtest/gtest.h>

namespace grove::stats {
namespace {

TEST(Stats, MedianAndPercentiles) {
  EXPECT_EQ(median({3, 1, 2}), 2);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);
  const std::vector<double> sorted{10, 20, 30, 40, 50};
  EXPECT_EQ(percentile_sorted(sorted, 0.0), 10);
  EXPECT_EQ(percentile_sorted(sorted, 1.0), 50);
  EXPECT_EQ(percentile_sorted(sorted, 0.5), 30);
  EXPECT_DOUBLE_EQ(percentile_sorted(sorted, 0.05), 12);
}

TEST(Stats, Crc32MatchesTheStandardCheckValue) {
  // The CRC-32 (IEEE) check value of "123456789".
  EXPECT_EQ(crc32("123456789"), 0xCBF43926u);
}

TEST(Stats, BootstrapIsDeterministicAndBracketsTheMedian) {
  std::vector<double> samples;
  for (int i = 0; i < 101; ++i)
    samples.push_back(static_cast<double>((i * 37) % 101));
  const Interval a = bootstrap_median_ci(samples, 42);
  const Interval b = bootstrap_median_ci(samples, 42);
  EXPECT_EQ(a.lo, b.lo);
  EXPECT_EQ(a.hi, b.hi);
  EXPECT_LE(a.lo, 50);
  EXPECT_GE(a.hi, 50);
  EXPECT_LT(a.lo, a.hi);
  // A constant sample has a degenerate interval.
  const std::vector<double> flat(20, 7.0);
  const Interval c = bootstrap_median_ci(flat, 1);
  EXPECT_EQ(c.lo, 7.0);
  EXPECT_EQ(c.hi, 7.0);
}

TEST(Stats, SummaryFields) {
  const std::vector<double> samples{5, 1, 4, 2, 3};
  const Summary s = summarize(samples, "cell");
  EXPECT_EQ(s.count, 5u);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 5);
  EXPECT_EQ(s.median, 3);
  EXPECT_EQ(s.mean, 3);
  EXPECT_DOUBLE_EQ(s.p5, 1.2);
}

}  // namespace
}  // namespace grove::stats
