#include "suite/compare.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <sstream>

#include "grove/error.hpp"

namespace grove::bench {
namespace {

std::vector<tsv::Cell> cells_of(const std::string& body) {
  std::istringstream in(std::string(tsv::kSpanOnlyHeader) + "\n" + body);
  return tsv::group(tsv::read(in, "synthetic"));
}

std::string printed(const Comparison& c) {
  char* data = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&data, &size);
  print_comparison(out, c, "A.tsv", "B.tsv");
  std::fclose(out);
  std::string text(data, size);
  std::free(data);
  return text;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

TEST(BenchRatio, IsTheRatioOfMediansWithADeterministicInterval) {
  std::vector<double> a, b;
  for (int i = 0; i < 41; ++i) {
    a.push_back(1.0 + (i * 17 % 41) * 0.01);  // median 1.20
    b.push_back(2.0 + (i * 13 % 41) * 0.02);  // median 2.40
  }
  const Ratio r1 = ratio_of_medians(a, b, 1234);
  const Ratio r2 = ratio_of_medians(a, b, 1234);
  EXPECT_DOUBLE_EQ(r1.value, 0.5);
  EXPECT_EQ(r1.ci.lo, r2.ci.lo);  // same seed, same resamples, bit for bit
  EXPECT_EQ(r1.ci.hi, r2.ci.hi);
  EXPECT_LE(r1.ci.lo, r1.value);
  EXPECT_GE(r1.ci.hi, r1.value);
  EXPECT_LT(r1.ci.lo, r1.ci.hi);
  // Another seed resamples differently but stays around the same ratio.
  const Ratio r3 = ratio_of_medians(a, b, 99);
  EXPECT_EQ(r3.value, r1.value);
  EXPECT_TRUE(r3.ci.lo != r1.ci.lo || r3.ci.hi != r1.ci.hi);
}

TEST(BenchRatio, ConstantSamplesGiveADegenerateIntervalAndZeroGivesNaN) {
  const std::vector<double> two(5, 2.0), four(3, 4.0), zero(3, 0.0);
  const Ratio r = ratio_of_medians(two, four, 7);
  EXPECT_EQ(r.value, 0.5);
  EXPECT_EQ(r.ci.lo, 0.5);
  EXPECT_EQ(r.ci.hi, 0.5);
  EXPECT_EQ(format_ratio(r), "0.500 [0.500, 0.500]");
  const Ratio n = ratio_of_medians(two, zero, 7);
  EXPECT_TRUE(std::isnan(n.value));
  EXPECT_EQ(format_ratio(n), "n/a");
}

TEST(BenchRatio, TheSeedComesFromTheCellPairSoTablesRegenerate) {
  const auto a = cells_of(
      "grove\tbcast\tauto\t2\t8\tisolated\t0\t1e-6\n"
      "grove\tbcast\tauto\t2\t8\tisolated\t1\t3e-6\n"
      "grove\tbcast\tauto\t2\t8\tisolated\t2\t2e-6\n");
  const auto b = cells_of(
      "grove\tbcast\tauto\t2\t8\tisolated\t0\t2e-6\n"
      "grove\tbcast\tauto\t2\t8\tisolated\t1\t5e-6\n"
      "grove\tbcast\tauto\t2\t8\tisolated\t2\t4e-6\n");
  const Comparison first = compare(a, b), second = compare(a, b);
  ASSERT_EQ(first.rows.size(), 1u);
  EXPECT_EQ(ratio_seed_key(first.rows[0]), "grove vs grove: bcast/auto/2/8/isolated / auto");
  EXPECT_EQ(printed(first), printed(second));
  const Ratio direct =
      ratio_of_medians(a[0].samples, b[0].samples, stats::crc32(ratio_seed_key(first.rows[0])));
  EXPECT_EQ(first.rows[0].ratio.ci.lo, direct.ci.lo);
  EXPECT_EQ(first.rows[0].ratio.ci.hi, direct.ci.hi);
  EXPECT_DOUBLE_EQ(first.rows[0].ratio.value, 0.5);
}

TEST(BenchCompare, PrintsExactRowsForTwoSyntheticFiles) {
  const auto a = cells_of(
      "grove\tbcast\tauto\t2\t4096\tisolated\t0\t2e-6\n"
      "grove\tbcast\tauto\t2\t4096\tisolated\t1\t2e-6\n"
      "grove\tbcast\tauto\t2\t4096\tisolated\t2\t2e-6\n"
      "grove\tbcast\tknomial:4\t2\t65536\tstreaming\t0\t1e-5\n"
      "grove\tbcast\tknomial:4\t2\t65536\tstreaming\t1\t1e-5\n"
      "grove\tbarrier\tauto\t2\t0\tisolated\t0\t1e-6\n");
  const auto b = cells_of(
      "grove\tbcast\tknomial:4\t2\t65536\tstreaming\t0\t8e-6\n"
      "grove\tbcast\tknomial:4\t2\t65536\tstreaming\t1\t8e-6\n"
      "grove\tbcast\tauto\t2\t4096\tisolated\t0\t4e-6\n"
      "grove\tallreduce\tauto\t2\t4\tisolated\t0\t1e-6\n");
  const auto lines = lines_of(printed(compare(a, b)));
  ASSERT_EQ(lines.size(), 7u);
  EXPECT_EQ(lines[0], "# grove bench --compare: A = A.tsv, B = B.tsv");
  EXPECT_EQ(lines[2],
            "collective      algorithm            ranks     bytes cadence          A_us        B_us"
            "                A/B [95% CI]      rank-mean A/B [95% CI]");
  EXPECT_EQ(lines[3],
            "bcast           auto                     2      4096 isolated         2.00        4.00"
            "        0.500 [0.500, 0.500]                           -");
  EXPECT_EQ(lines[4],
            "bcast           knomial:4                2     65536 streaming       10.00        8.00"
            "        1.250 [1.250, 1.250]                           -");
  EXPECT_EQ(lines[5], "# only in A: barrier/auto/2/0/isolated");
  EXPECT_EQ(lines[6], "# only in B: allreduce/auto/2/4/isolated");
}

TEST(BenchCompare, RefusesAFileWithTwoLibrariesForOneCell) {
  const auto a = cells_of(
      "grove\tbcast\tauto\t2\t8\tisolated\t0\t1e-6\n"
      "other\tbcast\tauto\t2\t8\tisolated\t0\t1e-6\n");
  try {
    compare(a, a);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::usage);
    EXPECT_THAT(e.what(), testing::HasSubstr("cell bcast/auto/2/8/isolated for two libraries"));
  }
}

TEST(BenchCompare, PeersAreMatchedWithoutTheirAlgorithm) {
  const auto cells = cells_of(
      "grove\tbcast\tauto\t2\t8\tisolated\t0\t1e-6\n"
      "grove\tbcast\tbinomial\t2\t8\tisolated\t0\t3e-6\n"
      "mpich\tbcast\tnative\t2\t8\tisolated\t0\t2e-6\n"
      "openmpi\tbcast\tnative\t2\t8\tisolated\t0\t4e-6\n"
      "openmpi\tbcast\tnative\t4\t8\tisolated\t0\t4e-6\n");
  const auto rows = compare_with_peers(cells, {"openmpi", "mpich", "gloo"});
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].key.algorithm, "auto");
  EXPECT_EQ(rows[0].b_library, "openmpi");
  EXPECT_DOUBLE_EQ(rows[0].ratio.value, 0.25);
  EXPECT_EQ(rows[1].b_library, "mpich");
  EXPECT_DOUBLE_EQ(rows[1].ratio.value, 0.5);
  EXPECT_EQ(rows[2].key.algorithm, "binomial");
  EXPECT_DOUBLE_EQ(rows[3].ratio.value, 1.5);
}

}  // namespace
}  // namespace grove::bench
