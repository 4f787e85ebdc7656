// The simulator at scale in sizes-only mode, the collective-level
// determinism check, and the sim_* parameters. Bounded: the largest run is
// a 10,000-rank broadcast (well under a second in a Debug build).

#include <gtest/gtest.h>

#include "campaigns/sim_jobs.hpp"
#include "campaigns/validate.hpp"
#include "core/params.hpp"
#include "grove/error.hpp"
#include "model/cost.hpp"

namespace grove::model {
namespace {

TEST(SimScale, TenThousandRankBroadcastsInSizesOnlyMode) {
  PortParams params;  // Hockney, single port: the closed forms are exact
  params.alpha_us = 5;
  params.beta_us_per_byte = 1e-4;
  for (const char* algorithm : {"binomial", "kary:4"}) {
    const Comparison c = compare_with_sim("bcast", algorithm, 10000, 1 << 20, params);
    EXPECT_TRUE(c.exact);
    EXPECT_NEAR(c.sim_us, c.formula_us, 1e-6 * c.formula_us) << algorithm;
  }
  // knomial at 4^6 = 4096 ranks: exact there.
  const Comparison k = compare_with_sim("bcast", "knomial:4", 4096, 1 << 20, params);
  EXPECT_TRUE(k.exact);
  EXPECT_NEAR(k.sim_us, k.formula_us, 1e-6 * k.formula_us);
}

TEST(SimScale, ACollectiveRunsIdenticallyTwice) {
  sim::SimConfig config;
  config.data = sim::DataMode::real;
  config.jitter = 0.7;
  config.seed = 99;
  config.threads = 3;
  config.ranks_per_node = 4;
  const SimJob job = make_sim_job(JobShape{"allreduce", "ring", 24, 1000, 0});
  sim::TraceVector a, b;
  SimOptions options;
  options.per_rank = true;
  options.trace = &a;
  const SimResult ra = run_on_sim(job, config, options);
  options.trace = &b;
  const SimResult rb = run_on_sim(job, config, options);
  EXPECT_EQ(ra.completion, rb.completion);
  EXPECT_EQ(ra.per_rank, rb.per_rank);
  EXPECT_TRUE(a.records == b.records);
  EXPECT_EQ(ra.stats.events, rb.stats.events);
  // Conservation at the collective level: everything sent was received.
  EXPECT_EQ(ra.stats.bytes_sent, ra.stats.bytes_received);
  EXPECT_EQ(ra.stats.messages_sent, ra.stats.messages_received);
  EXPECT_EQ(a.records.size(), ra.stats.messages_sent);
}

TEST(SimScale, ConfigurationComesFromTheSimParameters) {
  params::ScopedSet threads("sim_threads", "3");
  params::ScopedSet alpha("sim_alpha_us", "12.5");
  params::ScopedSet data("sim_data", "sizes");
  params::ScopedSet overlap("sim_overlap", "false");
  const sim::SimConfig c = sim::SimConfig::from_params();
  EXPECT_EQ(c.threads, 3);
  EXPECT_DOUBLE_EQ(c.alpha_us, 12.5);
  EXPECT_EQ(c.data, sim::DataMode::sizes);
  EXPECT_FALSE(c.overlap);
  EXPECT_THROW(params::Registry::global().set("sim_threads", "0", params::Source::api), Error);
}

}  // namespace
}  // namespace grove::model
