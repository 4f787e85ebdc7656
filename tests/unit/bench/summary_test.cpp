#include "suite/summary.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "suite/plot.hpp"

namespace grove::bench {
namespace {

std::vector<tsv::Cell> synthetic_cells(const std::string& body) {
  std::istringstream in(std::string(tsv::kSpanOnlyHeader) + "\n" + body);
  return tsv::group(tsv::read(in, "synthetic"));
}

// grove at 1, 3 and 6 us; openmpi at 2, 2, 4; mpich at 4, 1, 5.
const char* const kThreeCells =
    "grove\tbcast\tauto\t2\t8\tisolated\t0\t1e-6\n"
    "grove\tbcast\tauto\t2\t64\tisolated\t0\t3e-6\n"
    "grove\tbcast\tauto\t2\t512\tisolated\t0\t6e-6\n"
    "openmpi\tbcast\tnative\t2\t8\tisolated\t0\t2e-6\n"
    "openmpi\tbcast\tnative\t2\t64\tisolated\t0\t2e-6\n"
    "openmpi\tbcast\tnative\t2\t512\tisolated\t0\t4e-6\n"
    "mpich\tbcast\tnative\t2\t8\tisolated\t0\t4e-6\n"
    "mpich\tbcast\tnative\t2\t64\tisolated\t0\t1e-6\n"
    "mpich\tbcast\tnative\t2\t512\tisolated\t0\t5e-6\n";

TEST(BenchSummary, HeadlinesCountCellsAtOrBelowOneAndTheWorst) {
  const auto heads = headlines(synthetic_cells(kThreeCells), {"openmpi", "mpich"});
  ASSERT_EQ(heads.size(), 3u);
  EXPECT_EQ(heads[0].against, "openmpi");
  EXPECT_EQ(heads[0].cells, 3u);
  EXPECT_EQ(heads[0].at_or_below_one, 1u);  // 0.5, 1.5, 1.5
  EXPECT_DOUBLE_EQ(heads[0].worst, 1.5);
  EXPECT_EQ(heads[0].worst_cell, "bcast/auto/2/64/isolated");
  EXPECT_NEAR(heads[0].geometric_mean, std::cbrt(0.5 * 1.5 * 1.5), 1e-12);
  EXPECT_EQ(heads[1].against, "mpich");
  EXPECT_EQ(heads[1].at_or_below_one, 1u);  // 0.25, 3, 1.2
  EXPECT_DOUBLE_EQ(heads[1].worst, 3.0);
  EXPECT_EQ(heads[0].metric, kSpanMetric);
  EXPECT_EQ(heads[2].against, "faster of openmpi and mpich");
  EXPECT_EQ(heads[2].at_or_below_one, 1u);  // 1/2, 3/1, 6/4
  EXPECT_DOUBLE_EQ(heads[2].worst, 3.0);
}

TEST(BenchSummary, MarkdownHasOneRowPerGroveCellAndSaysWhyAPeerIsMissing) {
  RunSummary run;
  run.settings = {"2 ranks on 2 cores"};
  run.cells = synthetic_cells(kThreeCells);
  run.peers = {{"openmpi", true, "Open MPI v4.1.4"},
               {"mpich", true, "MPICH 4.0.2"},
               {"gloo", false, "grove-peer-gloo not built"}};
  const std::string md = markdown(run);
  EXPECT_THAT(md, testing::HasSubstr("- gloo: no numbers: grove-peer-gloo not built\n"));
  EXPECT_THAT(md, testing::HasSubstr(
                      "| grove | bcast | auto | 2 | 8 | isolated | 1.00 [1.00, 1.00] | - | 2.00 | "
                      "0.500 [0.500, 0.500] | - | - | 4.00 | 0.250 [0.250, 0.250] | - | - |\n"));
  EXPECT_THAT(md, testing::Not(testing::HasSubstr("gloo µs")));
  EXPECT_THAT(md, testing::HasSubstr("- grove vs faster of openmpi and mpich (span median): at "
                                     "or below 1 in 1 of 3 cells"));
  // Files without per-rank times give no per-rank headline.
  EXPECT_THAT(md, testing::Not(testing::HasSubstr("(per-rank mean)")));
}

// Two cells beside a load. 1 B: grove 8 -> 7.6 us (0.95), openmpi 20 -> 9 us
// (0.45): grove's slowdown is 2.11x openmpi's, but grove loaded is still
// below openmpi loaded. 64 B: grove 1 -> 3 us (3.0), openmpi 1 -> 1 us:
// over 2 and slower loaded. mpich 10 -> 10 us at 1 B (within 2x), 1 -> 1 us
// at 64 B (over 2, grove slower loaded).
const char* const kLoadedCells =
    "grove\tbcast\tauto\t4\t1\tisolated\t0\t8e-6\n"
    "grove+bg\tbcast\tauto\t4\t1\tisolated\t0\t7.6e-6\n"
    "openmpi\tbcast\tnative\t4\t1\tisolated\t0\t20e-6\n"
    "openmpi+bg\tbcast\tnative\t4\t1\tisolated\t0\t9e-6\n"
    "mpich\tbcast\tnative\t4\t1\tisolated\t0\t10e-6\n"
    "mpich+bg\tbcast\tnative\t4\t1\tisolated\t0\t10e-6\n"
    "grove\tbcast\tauto\t4\t64\tisolated\t0\t1e-6\n"
    "grove+bg\tbcast\tauto\t4\t64\tisolated\t0\t3e-6\n"
    "openmpi\tbcast\tnative\t4\t64\tisolated\t0\t1e-6\n"
    "openmpi+bg\tbcast\tnative\t4\t64\tisolated\t0\t1e-6\n"
    "mpich\tbcast\tnative\t4\t64\tisolated\t0\t1e-6\n"
    "mpich+bg\tbcast\tnative\t4\t64\tisolated\t0\t1e-6\n";

TEST(BenchSummary, BackgroundCountsCellsOverTwoWhereGroveLoadedIsStillFasterApart) {
  RunSummary run;
  run.settings = {"4 ranks on 2 cores"};
  run.cells = synthetic_cells(kLoadedCells);
  run.peers = {{"openmpi", true, "Open MPI v4.1.4"}, {"mpich", true, "MPICH 4.0.2"}};
  const std::string md = markdown(run);
  EXPECT_THAT(md, testing::HasSubstr(
                      "- grove's slowdown over openmpi's (span medians): at most 2 in 0 of 2 "
                      "cells; of the other 2, 1 with grove loaded at or below openmpi loaded, "
                      "worst 3.000 (bcast/auto/4/64/isolated)\n"));
  EXPECT_THAT(md, testing::HasSubstr(
                      "- grove's slowdown over mpich's (span medians): at most 2 in 1 of 2 cells; "
                      "of the other 1, 0 with grove loaded at or below mpich loaded, worst 3.000 "
                      "(bcast/auto/4/64/isolated)\n"));
}

TEST(BenchPlot, ScriptHasOneSeriesPerLibraryAndLeavesOutZeroBytes) {
  const auto cells = synthetic_cells(
      "grove\tbcast\tauto\t2\t0\tisolated\t0\t1e-6\n"
      "grove\tbcast\tauto\t2\t8\tisolated\t0\t1e-6\n"
      "grove\tbcast\tauto\t2\t64\tisolated\t0\t2e-6\n"
      "mpich\tbcast\tnative\t2\t8\tisolated\t0\t3e-6\n");
  const std::string gp = gnuplot_script(cells, "out.svg", "bcast, 2 ranks, isolated");
  EXPECT_THAT(gp, testing::HasSubstr("set terminal svg"));
  EXPECT_THAT(gp, testing::HasSubstr("set logscale xy"));
  EXPECT_THAT(gp, testing::HasSubstr("$s0 << EOD\n8 1 1 1\n64 2 2 2\nEOD\n"));
  EXPECT_THAT(gp, testing::HasSubstr("$s1 << EOD\n8 3 3 3\nEOD\n"));
  EXPECT_THAT(gp, testing::HasSubstr("title 'grove auto'"));
  EXPECT_THAT(gp, testing::HasSubstr("title 'mpich'"));
  EXPECT_THAT(gp, testing::HasSubstr("with filledcurves"));
  EXPECT_THAT(gnuplot_script(cells, "x.png", "t"), testing::HasSubstr("set terminal pngcairo"));
}

}  // namespace
}  // namespace grove::bench
