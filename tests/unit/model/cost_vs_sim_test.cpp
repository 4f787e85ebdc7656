// Every closed form in model/cost.hpp against the simulator running the
// actual schedule, Hockney and pLogP, on a grid of (P, size). Exact forms
// must agree to 1e-6; the others within the tolerance each form states.
// About two seconds in a Debug build.

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "campaigns/sim_jobs.hpp"
#include "campaigns/validate.hpp"
#include "coll/algorithm.hpp"
#include "model/cost.hpp"

namespace grove::model {
namespace {

std::shared_ptr<const sim::PlogpTable> linear_table() {
  // g(m) = 2 us + 1 ns/B, o_s = o_r = 1 us + 0.5 ns/B, L = 5 us.
  return std::make_shared<sim::PlogpTable>(sim::PlogpTable::from_rows(
      5, {{0, 1, 1, 2}, {1 << 20, 1 + 524.288, 1 + 524.288, 2 + 1048.576}}));
}

std::string with_args(const ClosedForm& form) {
  if (form.name == "kary" || form.name == "knomial") return form.name + ":3";
  if (form.name == "pipeline") return form.name + ":seg=4KiB";
  return form.name;
}

// The linear table where sends posted together overlap part of what one
// message spends alone above 8 KiB (a rendezvous round trip): gp(m) = g(m)
// up to 8 KiB, 4.384 us less at 16 KiB, 20% less at 1 MiB; in between
// interpolated, so the port model's l(m) = L + g(m) - gp(m) grows with m.
std::shared_ptr<const sim::PlogpTable> overlapping_table() {
  sim::PlogpTable t = *linear_table();
  t.set_posted_gap({{0, 2}, {8192, 2 + 8.192}, {16384, 14}, {1 << 20, 2 + 0.8 * 1048.576}});
  return std::make_shared<sim::PlogpTable>(std::move(t));
}

// Every form against the simulator on the grid; Hockney and, with `table`,
// pLogP. Returns the number of exact cases.
int check_every_form(const std::shared_ptr<const sim::PlogpTable>& table) {
  const std::vector<int> ranks = {2, 3, 4, 5, 8, 9, 13, 16, 27, 31, 64};
  int exact_cases = 0;
  for (const ClosedForm& form : closed_forms()) {
    if (!form.schedule) continue;  // shm: priced from host terms, nothing to simulate
    const std::string algorithm = with_args(form);
    const std::vector<size_t> sizes =
        form.collective == "barrier" ? std::vector<size_t>{0} : std::vector<size_t>{1000, 65536};
    for (size_t bytes : sizes) {
      for (int n : ranks) {
        if (form.name == "neighbor_exchange" && n % 2 != 0) continue;
        for (bool plogp : {false, true}) {
          PortParams params;
          params.plogp = plogp;
          params.alpha_us = 7;
          params.beta_us_per_byte = 2e-3;
          if (plogp) params.table = table;
          const Comparison c = compare_with_sim(form.collective, algorithm, n, bytes, params);
          exact_cases += c.exact;
          EXPECT_TRUE(c.agrees()) << fmt::format(
              "{} {} P={} {} B {}: formula {:.3f} us, simulated {:.3f} us ({}, tolerance {})",
              form.collective, algorithm, n, bytes, plogp ? "plogp" : "hockney", c.formula_us,
              c.sim_us, c.exact ? "exact" : "bound", c.tolerance);
        }
      }
    }
  }
  return exact_cases;
}

TEST(CostVsSim, EveryClosedFormAgreesWithTheSimulatedSchedule) {
  EXPECT_GT(check_every_form(linear_table()), 500);
}

TEST(CostVsSim, EveryClosedFormAgreesWhereSendsPostedTogetherOverlap) {
  const auto table = overlapping_table();
  ASSERT_NEAR(table->handshake_us(65536), 65.536 + 2 - (14 + (840.8608 - 14) * 49152 / 1032192),
              1e-9);
  EXPECT_GT(check_every_form(table), 500);
}

TEST(CostVsSim, EveryRegisteredAlgorithmHasAClosedForm) {
  for (const std::string& collective : sim_collectives()) {
    if (collective == "release") continue;  // a bcast shape, modelled in model/radix.hpp
    for (const coll::AlgorithmInfo& info : coll::algorithms_of(collective)) {
      if (info.name == "auto") continue;
      if (!info.schedule) continue;  // shm: no schedule to simulate or model
      EXPECT_NO_THROW(closed_form(collective, info.name)) << collective << " " << info.name;
    }
  }
}

TEST(CostVsSim, BinomialCorrectsTheReconstructedPlogpForm) {
  // P = 5: the last rank is 3 (two hops, the second behind one sibling):
  // 3 g + 2 L. The reconstructed [REC] form floor(log2 P) g + ceil(log2 P) L gives
  // 2 g + 3 L; the corrected ceil(log2 P) g + floor(log2 P) L gives 3 g + 2 L.
  PortParams params;
  params.plogp = true;
  params.table = linear_table();
  const Comparison c = compare_with_sim("bcast", "binomial", 5, 1000, params);
  const double g = 3, l = 5;
  EXPECT_DOUBLE_EQ(c.sim_us, 3 * g + 2 * l);
  EXPECT_DOUBLE_EQ(c.formula_us, 3 * g + 2 * l);
  EXPECT_NE(c.sim_us, 2 * g + 3 * l);
}

TEST(CostVsSim, ScatterAllgatherAtTwoRanksSendsOnlyItsNonEmptyBlocksWithOneLatency) {
  // P = 2: block b = ceil(m/2) of the ring and m - b of the scatter, both
  // from the root to rank 1 and posted together; at 1 B the scatter's block
  // is empty and not sent.
  PortParams params;
  params.plogp = true;
  params.table = linear_table();
  auto g = [](double bytes) { return 2 + bytes * 1048.576 / 1048576; };
  const double l = 5;
  for (size_t bytes : {size_t{1}, size_t{3}, size_t{1000}}) {
    const Comparison c = compare_with_sim("bcast", "scatter_allgather", 2, bytes, params);
    EXPECT_TRUE(c.exact) << bytes;
    EXPECT_NEAR(c.formula_us, c.sim_us, 1e-6) << bytes;
  }
  EXPECT_NEAR(compare_with_sim("bcast", "scatter_allgather", 2, 1, params).sim_us, g(1) + l, 1e-6);
  EXPECT_NEAR(compare_with_sim("bcast", "scatter_allgather", 2, 3, params).sim_us, g(2) + g(1) + l,
              1e-6);
  EXPECT_NEAR(compare_with_sim("bcast", "scatter_allgather", 2, 1000, params).sim_us,
              2 * g(500) + l, 1e-6);
}

TEST(CostVsSim, SegmentsPostedTogetherPayOneHandshake) {
  // Pipeline at P = 2, 64 KiB in four 16 KiB segments, on the overlapping
  // table: the root posts all four at once; the first takes g(s) + L, each
  // next one gp(s) more.
  PortParams params;
  params.plogp = true;
  params.table = overlapping_table();
  const Comparison c = compare_with_sim("bcast", "pipeline:seg=16KiB", 2, 65536, params);
  const double g = 2 + 16384 * 1048.576 / 1048576, gp = 14, l = 5;
  EXPECT_TRUE(c.exact);
  EXPECT_NEAR(c.sim_us, 3 * gp + g + l, 1e-6);
  EXPECT_NEAR(c.formula_us, c.sim_us, 1e-6);
  // One message of the whole still takes g(m) + L.
  const Comparison flat = compare_with_sim("bcast", "flat", 2, 65536, params);
  EXPECT_NEAR(flat.sim_us, 2 + 65.536 + l, 1e-6);
  EXPECT_NEAR(flat.formula_us, flat.sim_us, 1e-6);
}

}  // namespace
}  // namespace grove::model
