// The model-against-measurement report (tools/tuning/report.hpp) on a
// hand-made bench TSV whose medians are chosen against the closed forms, and
// Open MPI 4.1's scatter decision.

#include "tuning/report.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "grove/error.hpp"

namespace grove::tuning {
namespace {

TEST(Report, OpenMpiScatterRuleByRanksAndBlock) {
  EXPECT_EQ(openmpi_scatter_rule(2, 1), "flat");
  EXPECT_EQ(openmpi_scatter_rule(4, 2047), "binomial");
  EXPECT_EQ(openmpi_scatter_rule(4, 2048), "flat");
  EXPECT_EQ(openmpi_scatter_rule(4, 4096), "binomial");
  EXPECT_EQ(openmpi_scatter_rule(4, 8192), "flat");
  EXPECT_EQ(openmpi_scatter_rule(8, 16383), "binomial");
  EXPECT_EQ(openmpi_scatter_rule(8, 16384), "flat");
  EXPECT_EQ(openmpi_scatter_rule(32, 8192), "binomial");
  EXPECT_EQ(openmpi_scatter_rule(64, 511), "binomial");
  EXPECT_EQ(openmpi_scatter_rule(64, 512), "flat");
}

TEST(Report, FidelityAndRegretFromMedians) {
  const std::string dir = ::testing::TempDir();
  const std::string table = dir + "grove_report_plogp.txt";
  const std::string tsv = dir + "grove_report_bench.tsv";
  {
    // g(m) = 2 us + m / (1 KiB/us), L = 10 us.
    std::ofstream out(table);
    out << "L 10\n0 1 1 2\n1048576 500 500 1026\n";
  }
  {
    // bcast at 2 ranks, 1 KiB: u = 3 us, flat and binomial both predict
    // u + L = 13 us. Measured: flat 13 us (ratio 1.00), binomial 26 us
    // (0.50), auto 13 us (the fastest: regret 0).
    std::ofstream out(tsv);
    out << "library\tcollective\talgorithm\tranks\tbytes\tcadence\titeration\tseconds\n";
    for (int i = 0; i < 3; ++i) {
      out << "grove\tbcast\tflat\t2\t1024\tisolated\t" << i << "\t0.000013\n";
      out << "grove\tbcast\tbinomial\t2\t1024\tisolated\t" << i << "\t0.000026\n";
      out << "grove\tbcast\tauto\t2\t1024\tisolated\t" << i << "\t0.000013\n";
    }
  }
  const std::string md = report_markdown({tsv}, load_model(table));
  EXPECT_NE(md.find("| 1024 | 26.00 (**0.50**) | 13.00 (1.00) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| bcast | 1 | 2 | 50% |"), std::string::npos) << md;
  EXPECT_NE(md.find("geometric mean +0.0% over 1 cells; worst +0.0%: bcast N=2 1024 B: auto (shm) "
                    "13.000 us, fastest flat 13.000 us"),
            std::string::npos)
      << md;
  // The same jobs placed one rank per host: no shared-memory segment, so
  // auto's choice is the built-in table's schedule row for 2 ranks.
  const std::string across = report_markdown({tsv}, load_model(table), nullptr, 1);
  EXPECT_NE(across.find("worst +0.0%: bcast N=2 1024 B: auto (binomial) 13.000 us, fastest flat "
                        "13.000 us"),
            std::string::npos)
      << across;
  // Scatter at 4 ranks, 1 B blocks: Open MPI's rule says binomial, u(1) +
  // u(2) + 2 L = 24.003 us; the model's flat is 3 u(1) + L = 16.003 us.
  EXPECT_NE(md.find("| 4 | 1 | binomial | 24.003 | flat | 16.003 | 33.3% |"), std::string::npos)
      << md;
  try {
    report_markdown({dir + "grove_report_missing.tsv"}, load_model(table));
    ADD_FAILURE() << "a missing TSV was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("grove_report_missing.tsv"), std::string::npos)
        << e.what();
  }
  std::remove(table.c_str());
  std::remove(tsv.c_str());
}

}  // namespace
}  // namespace grove::tuning
