#include "suite/rank_mean.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>

#include "grove/error.hpp"
#include "suite/cell_loop.hpp"
#include "suite/summary.hpp"

namespace grove::bench {
namespace {

tsv::Cell cell_of(std::vector<std::vector<double>> rank_samples) {
  tsv::Cell c{"grove", {"bcast", "auto", 2, 8, "barrier-after"}, {}, std::move(rank_samples)};
  for (const auto& r : c.rank_samples)
    c.samples.push_back(std::max(r[0], r[1]));
  return c;
}

TEST(BenchRankMean, IsTheMeanOverRanksOfEachRanksMeanWithTheirMinAndMax) {
  // Rank 0 takes 1, 2, 3 (mean 2); rank 1 takes 3, 6, 3 (mean 4).
  const auto m = rank_mean(cell_of({{1, 3}, {2, 6}, {3, 3}}));
  ASSERT_TRUE(m.has_value());
  EXPECT_DOUBLE_EQ(m->mean, 3.0);
  EXPECT_DOUBLE_EQ(m->min_rank, 2.0);
  EXPECT_DOUBLE_EQ(m->max_rank, 4.0);
  EXPECT_EQ(m->count, 3u);
  // Resampled means of the per-sample means {2, 4, 3} stay within them.
  EXPECT_GE(m->ci.lo, 2.0);
  EXPECT_LE(m->ci.hi, 4.0);
  EXPECT_LE(m->ci.lo, m->ci.hi);
  // The same cell gives the same interval (the seed comes from the cell).
  const auto again = rank_mean(cell_of({{1, 3}, {2, 6}, {3, 3}}));
  EXPECT_EQ(again->ci.lo, m->ci.lo);
  EXPECT_EQ(again->ci.hi, m->ci.hi);
}

TEST(BenchRankMean, EqualSamplesGiveADegenerateIntervalAndMissingTimesNone) {
  const auto m = rank_mean(cell_of({{1, 3}, {1, 3}, {1, 3}, {1, 3}}));
  ASSERT_TRUE(m.has_value());
  EXPECT_DOUBLE_EQ(m->mean, 2.0);
  EXPECT_DOUBLE_EQ(m->ci.lo, 2.0);
  EXPECT_DOUBLE_EQ(m->ci.hi, 2.0);
  tsv::Cell partial = cell_of({{1, 3}, {1, 3}});
  partial.rank_samples[1].clear();  // a row without per-rank times
  EXPECT_FALSE(rank_mean(partial).has_value());
  tsv::Cell short_row = cell_of({{1, 3}});
  short_row.rank_samples[0].pop_back();  // fewer times than ranks
  EXPECT_FALSE(rank_mean(short_row).has_value());
}

TEST(BenchRankMean, RatioOfRankMeansWithItsInterval) {
  const tsv::Cell a = cell_of({{1, 3}, {1, 3}});      // 2
  const tsv::Cell b = cell_of({{0.5, 1.5}, {1, 1}});  // 1
  const Ratio r = ratio_of_rank_means(a, b, 7);
  EXPECT_DOUBLE_EQ(r.value, 2.0);
  // b's resampled means are 1 (both samples mean 1): the ratio is always 2.
  EXPECT_DOUBLE_EQ(r.ci.lo, 2.0);
  EXPECT_DOUBLE_EQ(r.ci.hi, 2.0);
  tsv::Cell none = b;
  none.rank_samples.clear();
  EXPECT_THROW(ratio_of_rank_means(a, none, 7), Error);
}

TEST(BenchRankMean, PercentileIntervalTakesSortedIndex49And1949Of2000) {
  std::vector<double> v;
  for (int i = 2000; i >= 1; --i)
    v.push_back(i);
  const auto ci = percentile_interval(v);
  EXPECT_DOUBLE_EQ(ci.lo, 50.0);
  EXPECT_DOUBLE_EQ(ci.hi, 1950.0);
}

// Two cells; grove against Open MPI and MPICH, where the faster MPI differs
// between the metrics (cell 64: Open MPI by span, MPICH by per-rank mean).
const char* const kTwoCells =
    "grove\tbcast\tauto\t2\t8\tisolated\t0\t4e-6\t1e-6,3e-6\n"
    "grove\tbcast\tauto\t2\t64\tisolated\t0\t2e-6\t2e-6,2e-6\n"
    "openmpi\tbcast\tnative\t2\t8\tisolated\t0\t5e-6\t4e-6,4e-6\n"
    "openmpi\tbcast\tnative\t2\t64\tisolated\t0\t1e-6\t1e-6,1e-6\n"
    "mpich\tbcast\tnative\t2\t8\tisolated\t0\t3e-6\t3e-6,3e-6\n"
    "mpich\tbcast\tnative\t2\t64\tisolated\t0\t4e-6\t0.5e-6,0.5e-6\n";

TEST(BenchRankMean, HeadlinesCountBothMetricsAgainstEachPeerAndTheFasterMpi) {
  std::istringstream in(std::string(tsv::kHeader) + "\n" + kTwoCells);
  const auto heads = headlines(tsv::group(tsv::read(in, "synthetic")), {"openmpi", "mpich"});
  ASSERT_EQ(heads.size(), 6u);
  struct Want {
    const char* against;
    std::string_view metric;
    size_t at_or_below;
    double worst;
    const char* worst_cell;
    double geomean;
  };
  const Want want[] = {
      {"openmpi", kSpanMetric, 1, 2.0, "bcast/auto/2/64/isolated", std::sqrt(0.8 * 2)},
      {"openmpi", kRankMeanMetric, 1, 2.0, "bcast/auto/2/64/isolated", std::sqrt(0.5 * 2)},
      {"mpich", kSpanMetric, 1, 4.0 / 3, "bcast/auto/2/8/isolated", std::sqrt(4.0 / 3 * 0.5)},
      {"mpich", kRankMeanMetric, 1, 4.0, "bcast/auto/2/64/isolated", std::sqrt(2.0 / 3 * 4)},
      {"faster of openmpi and mpich", kSpanMetric, 0, 2.0, "bcast/auto/2/64/isolated",
       std::sqrt(4.0 / 3 * 2)},
      {"faster of openmpi and mpich", kRankMeanMetric, 1, 4.0, "bcast/auto/2/64/isolated",
       std::sqrt(2.0 / 3 * 4)},
  };
  for (size_t i = 0; i < 6; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(heads[i].against, want[i].against);
    EXPECT_EQ(heads[i].metric, want[i].metric);
    EXPECT_EQ(heads[i].cells, 2u);
    EXPECT_EQ(heads[i].at_or_below_one, want[i].at_or_below);
    EXPECT_NEAR(heads[i].worst, want[i].worst, 1e-12);
    EXPECT_EQ(heads[i].worst_cell, want[i].worst_cell);
    EXPECT_NEAR(heads[i].geometric_mean, want[i].geomean, 1e-12);
  }
}

TEST(BenchRankMean, SummaryLinesAndMarkdownCarryBothMetrics) {
  std::istringstream in(std::string(tsv::kHeader) + "\n" + kTwoCells);
  RunSummary run;
  run.cells = tsv::group(tsv::read(in, "synthetic"));
  run.peers = {{"openmpi", true, "v"}, {"mpich", true, "v"}};
  const std::string md = markdown(run);
  // grove's cell 8: span 4, per-rank mean 2 (ranks 1 and 3); Open MPI 5 and 4.
  EXPECT_THAT(md, testing::HasSubstr("| grove | bcast | auto | 2 | 8 | isolated | 4.00 [4.00, "
                                     "4.00] | 2.00 [2.00, 2.00] (1.00..3.00) | 5.00 | 0.800 "
                                     "[0.800, 0.800] | 4.00 | 0.500 [0.500, 0.500] |"));
  EXPECT_THAT(md, testing::HasSubstr("- grove vs faster of openmpi and mpich (per-rank mean): at "
                                     "or below 1 in 1 of 2 cells"));
  char* text = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  print_summary(out, run);
  std::fclose(out);
  const std::string printed(text, size);
  std::free(text);
  EXPECT_THAT(printed, testing::HasSubstr("# grove vs faster of openmpi and mpich (span median): "
                                          "at or below 1 in 0 of 2 cells"));
  EXPECT_THAT(printed, testing::HasSubstr("2.00 [2.00, 2.00] (1.00..3.00)"));
}

TEST(BenchRankMean, CompareGivesTheRatioOfPerRankMeans) {
  auto cells = [](const std::string& body) {
    std::istringstream in(std::string(tsv::kHeader) + "\n" + body);
    return tsv::group(tsv::read(in, "synthetic"));
  };
  const auto a = cells(
      "grove\tbcast\tauto\t2\t8\tbarrier-after\t0\t5e-6\t2e-6,4e-6\n"
      "grove\tbcast\tauto\t2\t8\tbarrier-after\t1\t5e-6\t2e-6,4e-6\n");
  const auto b = cells("grove\tbcast\tauto\t2\t8\tbarrier-after\t0\t2e-6\t1e-6,2e-6\n");
  const Comparison c = compare(a, b);
  ASSERT_EQ(c.rows.size(), 1u);
  ASSERT_TRUE(c.rows[0].rank_ratio.has_value());
  EXPECT_DOUBLE_EQ(c.rows[0].rank_ratio->value, 2.0);  // 3 us / 1.5 us
  EXPECT_DOUBLE_EQ(c.rows[0].ratio.value, 2.5);        // spans 5 / 2
  EXPECT_THAT(comparison_markdown(c, "A", "B"),
              testing::HasSubstr("| 5.00 | 2.00 | 2.500 [2.500, 2.500] | 2.000 [2.000, 2.000] |"));
}

// The loop's order of barrier and call, recorded by fake steps.
struct RecordingOps {
  std::string log;
  void barrier() { log += 'B'; }
  void call() { log += 'C'; }
  bool agree(bool) {
    log += 'A';
    return false;
  }
};

TEST(BenchCellLoop, BarrierBeforeOrAfterEachCallInOneBatch) {
  LoopLimits limits;
  limits.min_iterations = 1;
  RecordingOps before;
  Stamps s1;
  time_cell(before, limits, s1);
  EXPECT_EQ(before.log, "BCBCBCBCBCBCBCBCA");
  EXPECT_EQ(s1.start.size(), 8u);
  limits.barrier_after = true;
  RecordingOps after;
  Stamps s2;
  time_cell(after, limits, s2);
  EXPECT_EQ(after.log, "CBCBCBCBCBCBCBCBA");
  EXPECT_STREQ(cadence_text(limits), "barrier-after");
}

TEST(BenchCellLoop, SpanAndPerRankTimesFromStamps) {
  const std::vector<std::vector<double>> starts{{0, 10}, {1, 11}}, ends{{3, 12}, {2, 15}};
  EXPECT_EQ(iteration_times(starts, ends, false), (std::vector<double>{3, 5}));
  EXPECT_EQ(rank_times(starts, ends, false), (std::vector<std::vector<double>>{{3, 1}, {2, 4}}));
  EXPECT_EQ(rank_times(starts, ends, true),
            (std::vector<std::vector<double>>{{3.0 / 16, 1.0 / 16}, {2.0 / 16, 4.0 / 16}}));
}

}  // namespace
}  // namespace grove::bench
