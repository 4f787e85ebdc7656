#include "suite/tsv.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "grove/error.hpp"

namespace grove::bench::tsv {
namespace {

const std::string kHead = std::string(kSpanOnlyHeader) + "\n";

std::string error_of(const std::string& text) {
  std::istringstream in(text);
  try {
    read(in, "x.tsv");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::protocol);
    return e.what();
  }
  return "no error";
}

TEST(BenchTsv, FormatsARowExactly) {
  const Row row{"openmpi", "bcast", "native", 4, 4096, "isolated", 7, 1.5e-6};
  EXPECT_EQ(format_row(row), "openmpi\tbcast\tnative\t4\t4096\tisolated\t7\t1.500000000e-06\t-\n");
  const Row with_ranks{"mpich", "bcast", "native", 2, 1, "barrier-after", 0, 3e-6, {1e-6, 2.5e-6}};
  EXPECT_EQ(format_row(with_ranks),
            "mpich\tbcast\tnative\t2\t1\tbarrier-after\t0\t3.000000000e-06\t"
            "1.000000000e-06,2.500000000e-06\n");
}

TEST(BenchTsv, PerRankTimesRoundTripAndMustCoverEveryRank) {
  const std::vector<Row> rows{
      {"grove", "bcast", "auto", 2, 8, "barrier-after", 0, 4e-6, {1e-6, 3e-6}},
      {"grove", "bcast", "auto", 2, 8, "barrier-after", 1, 5e-6, {2e-6, 4e-6}}};
  std::ostringstream out;
  write(out, rows);
  std::istringstream in(out.str());
  const auto cells = group(read(in, "mem"));
  ASSERT_EQ(cells.size(), 1u);
  EXPECT_EQ(cells[0].rank_samples, (std::vector<std::vector<double>>{{1e-6, 3e-6}, {2e-6, 4e-6}}));
  EXPECT_TRUE(has_rank_times(cells[0]));
  EXPECT_EQ(rows_of(cells)[1].rank_seconds, (std::vector<double>{2e-6, 4e-6}));

  const std::string head = std::string(kHeader) + "\n";
  EXPECT_THAT(error_of(head + "grove\tbcast\tauto\t2\t1\tisolated\t0\t1e-6\t1e-6\n"),
              testing::HasSubstr("x.tsv:2: rank_seconds has 1 values for 2 ranks"));
  EXPECT_THAT(error_of(head + "grove\tbcast\tauto\t2\t1\tisolated\t0\t1e-6\t1e-6,x\n"),
              testing::HasSubstr("seconds 'x'"));
  EXPECT_THAT(error_of(head + "grove\tbcast\tauto\t2\t1\tisolated\t0\t1e-6\n"),
              testing::HasSubstr("x.tsv:2: 8 fields, expected 9"));
  // "-": no per-rank times; such a cell has no per-rank mean.
  std::istringstream dash(head + "grove\tbcast\tauto\t2\t1\tisolated\t0\t1e-6\t-\n");
  EXPECT_FALSE(has_rank_times(group(read(dash, "mem"))[0]));
}

TEST(BenchTsv, ReadsWhatItWrites) {
  const std::vector<Row> rows{{"grove", "bcast", "auto", 2, 1, "isolated", 0, 2.25e-6},
                              {"grove", "bcast", "auto", 2, 1, "isolated", 1, 3e-6},
                              {"gloo", "barrier", "native", 2, 0, "streaming", 0, 1e-3}};
  std::ostringstream out;
  write(out, rows);
  std::istringstream in("# a comment\n" + out.str() + "\n");
  const auto back = read(in, "mem");
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ(back[0].library, "grove");
  EXPECT_EQ(back[1].seconds, 3e-6);
  EXPECT_EQ(back[2].cadence, "streaming");
  EXPECT_EQ(back[2].bytes, 0u);
  EXPECT_EQ(format_row(back[0]), format_row(rows[0]));
}

TEST(BenchTsv, RejectsMalformedInputNamingFileAndLine) {
  EXPECT_THAT(error_of(""), testing::HasSubstr("x.tsv: empty, no TSV header"));
  EXPECT_THAT(error_of("a\tb\n"), testing::HasSubstr("x.tsv:1: not a grove bench TSV"));
  EXPECT_THAT(error_of(kHead + "grove\tbcast\tauto\t2\t1\tisolated\t0\n"),
              testing::HasSubstr("x.tsv:2: 7 fields, expected 8"));
  EXPECT_THAT(error_of(kHead + "grove\tbcast\tauto\ttwo\t1\tisolated\t0\t1e-6\n"),
              testing::HasSubstr("x.tsv:2: ranks 'two' is not a non-negative integer"));
  EXPECT_THAT(error_of(kHead + "grove\tbcast\tauto\t2\t-1\tisolated\t0\t1e-6\n"),
              testing::HasSubstr("bytes '-1'"));
  EXPECT_THAT(error_of(kHead + "grove\tbcast\tauto\t2\t1\tsometimes\t0\t1e-6\n"),
              testing::HasSubstr("cadence 'sometimes'"));
  EXPECT_THAT(error_of(kHead + "grove\tbcast\tauto\t2\t1\tisolated\t0\tnan\n"),
              testing::HasSubstr("seconds 'nan'"));
  EXPECT_THAT(error_of(kHead + "grove\tbcast\tauto\t0\t1\tisolated\t0\t1e-6\n"),
              testing::HasSubstr("ranks must be >= 1"));
  EXPECT_THAT(error_of(kHead + "\tbcast\tauto\t2\t1\tisolated\t0\t1e-6\n"),
              testing::HasSubstr("field 1 is empty"));
}

TEST(BenchTsv, GroupPoolsSamplesOfTheSameCellAcrossFilesInOrder) {
  // Two rounds of the same two cells, as the --peers merger reads them.
  const std::vector<Row> rows{
      {"grove", "bcast", "auto", 2, 8, "isolated", 0, 1},
      {"grove", "bcast", "auto", 2, 8, "isolated", 1, 2},
      {"mpich", "bcast", "native", 2, 8, "isolated", 0, 10},
      {"grove", "bcast", "auto", 2, 8, "isolated", 0, 3},  // round 2
      {"mpich", "bcast", "native", 2, 8, "isolated", 0, 20},
      {"grove", "bcast", "auto", 4, 8, "isolated", 0, 5},  // another cell
  };
  const auto cells = group(rows);
  ASSERT_EQ(cells.size(), 3u);
  EXPECT_EQ(cells[0].library, "grove");
  EXPECT_EQ(cells[0].key.text(), "bcast/auto/2/8/isolated");
  EXPECT_EQ(cells[0].samples, (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(cells[1].library, "mpich");
  EXPECT_EQ(cells[1].samples, (std::vector<double>{10, 20}));
  EXPECT_EQ(cells[2].key.ranks, 4);
  // Written back, iterations are renumbered within each pooled cell.
  const auto merged = rows_of(cells);
  ASSERT_EQ(merged.size(), 6u);
  EXPECT_EQ(merged[2].iteration, 2u);
  EXPECT_EQ(merged[2].seconds, 3);
  EXPECT_EQ(merged[4].iteration, 1u);
  EXPECT_EQ(merged[4].library, "mpich");
}

}  // namespace
}  // namespace grove::bench::tsv
