// The per-cell machine state (tools/tuning/state_correction.hpp) and the
// calibration file it reads (bench/suite/calibration.hpp), on hand-made
// files whose factors are known exactly.

#include "tuning/state_correction.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

#include "grove/error.hpp"
#include "suite/calibration.hpp"
#include "support/error_text.hpp"
#include "tuning/report.hpp"

namespace grove::tuning {
namespace {

std::string temp(const std::string& name) {
  return ::testing::TempDir() + name;
}

void write(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

using grove::testing::error_text;

TEST(Calibration, AppendsWithOneHeaderAndReadsBack) {
  const std::string path = temp("grove_calibration_rows.tsv");
  std::remove(path.c_str());
  bench::append_calibration(path, {{"bcast/auto/2/8/isolated", "before", 8, 1.5}});
  bench::append_calibration(path, {{"bcast/auto/2/8/isolated", "after", 1048576, 80.25}});
  const std::vector<bench::CalibrationRow> rows = bench::read_calibration(path);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].cell, "bcast/auto/2/8/isolated");
  EXPECT_EQ(rows[0].moment, "before");
  EXPECT_EQ(rows[0].bytes, 8u);
  EXPECT_DOUBLE_EQ(rows[0].one_way_us, 1.5);
  EXPECT_EQ(rows[1].moment, "after");
  EXPECT_EQ(rows[1].bytes, 1048576u);
  EXPECT_DOUBLE_EQ(rows[1].one_way_us, 80.25);
  std::ifstream in(path);
  std::string first, second;
  std::getline(in, first);
  std::getline(in, second);
  EXPECT_EQ(first, bench::kCalibrationHeader);
  EXPECT_EQ(second, "bcast/auto/2/8/isolated\tbefore\t8\t1.5000");
  std::remove(path.c_str());
}

TEST(Calibration, RefusesBadFilesNamingLineAndCause) {
  const std::string path = temp("grove_calibration_bad.tsv");
  const std::string header = std::string(bench::kCalibrationHeader) + "\n";
  auto refusal = [&](const std::string& text) {
    write(path, text);
    return error_text([&] { bench::read_calibration(path); });
  };
  EXPECT_NE(refusal("").find("empty (no header)"), std::string::npos);
  EXPECT_NE(refusal("cell bytes\n").find(":1: the header must be"), std::string::npos);
  EXPECT_NE(refusal(header + "c\tbefore\t8\n").find(":2: 3 fields, expected 4"), std::string::npos);
  EXPECT_NE(refusal(header + "c\tduring\t8\t1\n").find("moment 'during'"), std::string::npos);
  EXPECT_NE(refusal(header + "c\tafter\t-8\t1\n").find("bytes '-8'"), std::string::npos);
  EXPECT_NE(refusal(header + "c\tafter\t8\t0\n").find("one_way_us '0' is not a positive"),
            std::string::npos);
  EXPECT_NE(refusal(header + "c\tafter\t8\tnan\n").find("one_way_us 'nan'"), std::string::npos);
  EXPECT_NE(refusal(header + "\tafter\t8\t1\n").find(":2: empty cell"), std::string::npos);
  EXPECT_NE(error_text([] {
              bench::read_calibration(temp("grove_calibration_none.tsv"));
            }).find("cannot read calibration file"),
            std::string::npos);
  std::remove(path.c_str());
}

TEST(StateCorrection, FactorInterpolatesInLogSizeBetweenTheTwoPingPongs) {
  const std::string cells = temp("grove_state_cells.tsv");
  const std::string ref = temp("grove_state_ref.tsv");
  const std::string h = std::string(bench::kCalibrationHeader) + "\n";
  // Reference: 1 us at 8 B, 80 us at 1 MiB (geometric mean of two probes'
  // rows: 0.5 and 2 -> 1; 40 and 160 -> 80).
  write(ref, h + "probe\tbefore\t8\t0.5\nprobe\tafter\t8\t2\nprobe\tbefore\t1048576\t40\n" +
                 "probe\tafter\t1048576\t160\n");
  // Cell A ran 2x slower at 8 B and 4x faster at 1 MiB (before and after
  // agree); cell B changed state (1 MiB: 20 before, 80 after).
  write(cells,
        h + "A\tbefore\t8\t2\nA\tafter\t8\t2\nA\tbefore\t1048576\t20\nA\tafter\t1048576\t20\n" +
            "B\tbefore\t8\t1\nB\tafter\t8\t1\nB\tbefore\t1048576\t20\nB\tafter\t1048576\t80\n");
  const StateCorrection c(cells, {ref});
  EXPECT_DOUBLE_EQ(c.reference().at(8), 1.0);
  EXPECT_DOUBLE_EQ(c.reference().at(1048576), 80.0);
  EXPECT_NEAR(*c.factor("A", 0), 2.0, 1e-12);
  EXPECT_NEAR(*c.factor("A", 8), 2.0, 1e-12);
  EXPECT_NEAR(*c.factor("A", 1048576), 0.25, 1e-12);
  EXPECT_NEAR(*c.factor("A", 4u << 20), 0.25, 1e-12);
  // 8 B -> 1 MiB is 17 doublings; 2^(17/2) B sits halfway: sqrt(2 * 0.25).
  EXPECT_NEAR(*c.factor("A", 2896), std::sqrt(0.5), 2e-3);
  EXPECT_FALSE(c.state("A")->changed);
  EXPECT_TRUE(c.state("B")->changed);
  EXPECT_NEAR(*c.factor("B", 1048576), 0.5, 1e-12);  // sqrt(20 * 80) / 80
  EXPECT_FALSE(c.factor("C", 8).has_value());
  // A size the reference lacks, and no reference at all, are refused by name.
  write(cells, h + "A\tbefore\t16\t2\n");
  EXPECT_NE(error_text([&] {
              StateCorrection(cells, {ref});
            }).find("calibration of cell A in '" + cells + "' has 16 B"),
            std::string::npos);
  EXPECT_NE(error_text([&] {
              StateCorrection(cells, std::vector<std::string>{});
            }).find("needs --calibration-ref"),
            std::string::npos);
  std::remove(cells.c_str());
  std::remove(ref.c_str());
}

TEST(StateCorrection, ReportComparesEachCellInItsState) {
  const std::string table = temp("grove_state_plogp.txt");
  const std::string tsv = temp("grove_state_bench.tsv");
  const std::string cells = temp("grove_state_cells2.tsv");
  const std::string ref = temp("grove_state_ref2.tsv");
  // As Report.FidelityAndRegretFromMedians: flat and binomial bcast at 2
  // ranks and 1 KiB both predict 13 us.
  write(table, "L 10\n0 1 1 2\n1048576 500 500 1026\n");
  std::string rows = "library\tcollective\talgorithm\tranks\tbytes\tcadence\titeration\tseconds\n";
  for (int i = 0; i < 3; ++i) {
    rows += "grove\tbcast\tflat\t2\t1024\tisolated\t" + std::to_string(i) + "\t0.000013\n";
    rows += "grove\tbcast\tbinomial\t2\t1024\tisolated\t" + std::to_string(i) + "\t0.000026\n";
  }
  write(tsv, rows);
  // binomial's cell ran with the machine 2x slower at both sizes: in its
  // state the model predicts 26 us, its measurement. flat's cell has no
  // calibration and keeps the plain prediction.
  const std::string h = std::string(bench::kCalibrationHeader) + "\n";
  write(ref, h + "probe\tbefore\t8\t1\nprobe\tbefore\t1048576\t50\n");
  write(cells, h + "bcast/binomial/2/1024/isolated\tbefore\t8\t2\n" +
                   "bcast/binomial/2/1024/isolated\tafter\t1048576\t100\n");
  const StateCorrection c(cells, {ref});
  const std::string md = report_markdown({tsv}, load_model(table), &c);
  EXPECT_NE(md.find("| 1024 | 26.00 (1.00) | 13.00 (1.00) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| bcast | 2 | 2 | 100% | 1 | 50% |"), std::string::npos) << md;
  EXPECT_NE(md.find("cells without a calibration: 1."), std::string::npos) << md;
  // Regret in the probe's state: binomial's 26 us ran 2x slow, so it counts
  // as 13 us, even with flat's 13 (plain, binomial would be 2x flat).
  EXPECT_NE(md.find("Medians in the probe's state"), std::string::npos) << md;
  EXPECT_NE(md.find("The model's pick among the measured algorithms against the fastest: "
                    "geometric mean +0.0% over 1 cells; worst +0.0%: bcast N=2 1024 B: the "
                    "model's pick flat 13.000 us, fastest binomial 13.000 us"),
            std::string::npos)
      << md;
  for (const std::string& p : {table, tsv, cells, ref})
    std::remove(p.c_str());
}

TEST(Calibration, StateChangedOnlyBeyondTheRatioAtTheLargeSize) {
  using bench::state_changed;
  const size_t large = bench::kCalibrationLarge, small = bench::kCalibrationSmall;
  EXPECT_FALSE(state_changed({{small, 1}, {large, 100}}, {{small, 5}, {large, 120}}));
  EXPECT_TRUE(state_changed({{small, 1}, {large, 100}}, {{small, 1}, {large, 121}}));
  EXPECT_TRUE(state_changed({{large, 121}}, {{large, 100}}));
  EXPECT_FALSE(state_changed({{large, 100}}, {{large, 83.5}}));
  EXPECT_TRUE(state_changed({{large, 100}}, {{large, 83}}));
  // Ranks other than 0 have no ping-pongs: never a change.
  EXPECT_FALSE(state_changed({}, {}));
  EXPECT_FALSE(state_changed({{small, 1}}, {{small, 9}}));
}

TEST(StateCorrection, EachCellTakesTheNearestTableAndItsFactorAgainstIt) {
  const std::string cells = temp("grove_states_cells.tsv");
  const std::string slow = temp("grove_states_slow.tsv");
  const std::string fast = temp("grove_states_fast.tsv");
  const std::string h = std::string(bench::kCalibrationHeader) + "\n";
  write(slow, h + "probe\tbefore\t8\t1\nprobe\tbefore\t1048576\t80\n");
  write(fast, h + "probe\tbefore\t8\t0.25\nprobe\tbefore\t1048576\t20\n");
  // F: near the fast table (8 B 0.25, 1 MiB 22); S: near the slow one; M:
  // 2x from each at both sizes (0.5 and 40) goes to the lower index.
  write(cells, h + "F\tbefore\t8\t0.25\nF\tafter\t1048576\t22\n" +
                   "S\tbefore\t8\t0.9\nS\tafter\t1048576\t90\n" +
                   "M\tbefore\t8\t0.5\nM\tafter\t1048576\t40\n");
  const StateCorrection c(cells, std::vector<std::vector<std::string>>{{slow}, {fast}});
  EXPECT_EQ(c.tables(), 2u);
  EXPECT_EQ(c.nearest("F"), 1u);
  EXPECT_EQ(c.nearest("S"), 0u);
  EXPECT_EQ(c.nearest("M"), 0u);
  EXPECT_EQ(c.nearest("unknown"), 0u);
  EXPECT_NEAR(*c.factor("F", 1048576), 22.0 / 20, 1e-12);
  EXPECT_NEAR(*c.factor("F", 8), 1.0, 1e-12);
  EXPECT_NEAR(*c.factor("F", 1048576, 0), 22.0 / 80, 1e-12);
  EXPECT_NEAR(*c.factor("S", 1048576), 90.0 / 80, 1e-12);
  EXPECT_DOUBLE_EQ(c.reference(1).at(1048576), 20.0);
  // A set without files is refused, as is a table's reference lacking a size.
  EXPECT_NE(error_text([&] {
              StateCorrection(cells, std::vector<std::vector<std::string>>{{slow}, {}});
            }).find("each --state table needs its own"),
            std::string::npos);
  write(fast, h + "probe\tbefore\t8\t0.25\n");
  EXPECT_NE(error_text([&] {
              StateCorrection(cells, std::vector<std::vector<std::string>>{{slow}, {fast}});
            }).find("has 1048576 B, the reference of table 1 has no ping-pong of that size"),
            std::string::npos);
  for (const std::string& p : {cells, slow, fast})
    std::remove(p.c_str());
}

TEST(StateCorrection, ReportPricesEachCellWithItsStatesTable) {
  const std::string slow_table = temp("grove_states_slow_plogp.txt");
  const std::string fast_table = temp("grove_states_fast_plogp.txt");
  const std::string tsv = temp("grove_states_bench.tsv");
  const std::string cells = temp("grove_states_cells2.tsv");
  const std::string slow = temp("grove_states_slow2.tsv");
  const std::string fast = temp("grove_states_fast2.tsv");
  // As ReportComparesEachCellInItsState: with L 10 flat and binomial bcast
  // at 2 ranks and 1 KiB predict 13 us; the fast table (L 5) predicts 8.
  write(slow_table, "L 10\n0 1 1 2\n1048576 500 500 1026\n");
  write(fast_table, "L 5\n0 1 1 2\n1048576 500 500 1026\n");
  std::string rows = "library\tcollective\talgorithm\tranks\tbytes\tcadence\titeration\tseconds\n";
  for (int i = 0; i < 3; ++i) {
    rows += "grove\tbcast\tflat\t2\t1024\tisolated\t" + std::to_string(i) + "\t0.000008\n";
    rows += "grove\tbcast\tbinomial\t2\t1024\tisolated\t" + std::to_string(i) + "\t0.000013\n";
  }
  write(tsv, rows);
  // flat's cell ran in the fast state, binomial's in the slow one, each
  // exactly as its table's probe did (factor 1).
  const std::string h = std::string(bench::kCalibrationHeader) + "\n";
  write(slow, h + "probe\tbefore\t8\t1\nprobe\tbefore\t1048576\t80\n");
  write(fast, h + "probe\tbefore\t8\t0.25\nprobe\tbefore\t1048576\t30\n");
  write(cells, h + "bcast/flat/2/1024/isolated\tbefore\t8\t0.25\n" +
                   "bcast/flat/2/1024/isolated\tafter\t1048576\t30\n" +
                   "bcast/binomial/2/1024/isolated\tbefore\t8\t1\n" +
                   "bcast/binomial/2/1024/isolated\tafter\t1048576\t80\n");
  const StateCorrection c(cells, std::vector<std::vector<std::string>>{{slow}, {fast}});
  const std::vector<ModelSource> models{load_model(slow_table), load_model(fast_table)};
  const std::string md = report_markdown({tsv}, models, &c);
  EXPECT_NE(md.find("| 1024 | 13.00 (1.00) | 8.00 (1.00) |"), std::string::npos) << md;
  // Plain, table 0 prices flat at 13 us against 8 measured: out of the band.
  EXPECT_NE(md.find("| bcast | 2 | 2 | 100% | 1 | 50% |"), std::string::npos) << md;
  EXPECT_NE(md.find("Calibrated cells priced with each table: table 0 (" + slow_table +
                    "): 1, table 1 (" + fast_table + "): 1."),
            std::string::npos)
      << md;
  // Two tables need two reference sets.
  const StateCorrection one(cells, {slow});
  EXPECT_NE(error_text([&] {
              report_markdown({tsv}, models, &one);
            }).find("2 pLogP tables and 1 sets of reference calibrations"),
            std::string::npos);
  for (const std::string& p : {slow_table, fast_table, tsv, cells, slow, fast})
    std::remove(p.c_str());
}

}  // namespace
}  // namespace grove::tuning
