// The fence's deterministic fault campaign on the simulator
// (src/runtime/fence_sim.hpp), sized for ctest: every relay killed at every
// message step for N = 8 and 16 (every shape), sampled steps at N = 64 and
// 256, and 10,000 seeded random double and triple failures. The full
// campaign (N up to 256, every step) is `grove fence campaign`; its counts
// are in docs/fence.md.

#include <gtest/gtest.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "campaigns/fence_sim.hpp"
#include "transport/sim/sim_config.hpp"

namespace grove::runtime {
namespace {

sim::SimConfig model() {
  sim::SimConfig c;  // hockney: alpha 100 us, c 25 us, t 8, 10 Gbit/s
  c.data = sim::DataMode::real;
  return c;
}

void expect_clean(const FenceCampaignCounts& counts) {
  EXPECT_EQ(counts.bad, 0u) << fmt::format("{}", fmt::join(counts.first_bad, "\n"));
}

TEST(FenceSim, FailureFreeRunIsExactAndDeterministic) {
  FenceSimCase c;
  c.size = 40;
  c.config.routing_radix = 6;
  c.config.release_radix = 3;
  c.generations = 3;
  c.record_steps = true;
  const FenceSimResult a = run_fence_sim(c, model());
  const FenceSimResult b = run_fence_sim(c, model());
  ASSERT_TRUE(a.ok) << a.failure;
  EXPECT_EQ(a.survivors, 40);
  EXPECT_EQ(a.completion, b.completion);
  EXPECT_EQ(a.steps, b.steps);
  EXPECT_EQ(a.messages, b.messages);
  EXPECT_EQ(a.replays, 0u);
  EXPECT_GT(a.coverage, 0);
}

TEST(FenceSim, EveryRelayKilledAtEveryStepN8AndN16) {
  FenceCampaign campaign;
  campaign.sizes = {8, 16};
  campaign.release_radices = {2, 3, 4};
  campaign.routing_radices = {4, 8, 16, 32, 64};
  campaign.random_trials = 0;
  const FenceCampaignCounts counts = run_fence_campaign(campaign, model(), {});
  expect_clean(counts);
  EXPECT_GT(counts.single_runs, 2000u);
}

TEST(FenceSim, EveryRelayKilledAtSampledStepsN64) {
  FenceCampaign campaign;
  campaign.sizes = {64};
  campaign.release_radices = {3};
  campaign.routing_radices = {8, 64};
  campaign.max_steps = 10;
  campaign.random_trials = 0;
  const FenceCampaignCounts counts = run_fence_campaign(campaign, model(), {});
  expect_clean(counts);
  EXPECT_GT(counts.single_runs, 400u);
}

TEST(FenceSim, ReleaseRelaysKilledAtSampledStepsN256) {
  FenceSimCase clean;
  clean.size = 256;
  clean.config.routing_radix = 64;
  clean.config.release_radix = 4;
  clean.record_steps = true;
  const FenceSimResult base = run_fence_sim(clean, model());
  ASSERT_TRUE(base.ok) << base.failure;
  int runs = 0;
  // The root, a routing relay, and release relays at three depths.
  for (int relay : {0, 1, 2, 5, 21, 64}) {
    for (size_t i = 0; i < base.steps.size(); i += base.steps.size() / 5) {
      FenceSimCase c = clean;
      c.record_steps = false;
      c.failures = {{relay, base.steps[i]}};
      c.notices = static_cast<SimNotices>(runs % 3);
      c.seed = static_cast<uint64_t>(runs);
      const FenceSimResult r = run_fence_sim(c, model());
      EXPECT_TRUE(r.ok) << "relay " << relay << " at step " << i << ": " << r.failure;
      ++runs;
    }
  }
  EXPECT_GE(runs, 30);
}

// 10,000 seeded double and triple failures, in two halves (ctest may run
// them side by side).
void random_half(uint64_t seed) {
  FenceCampaign campaign;
  campaign.sizes = {8, 16};
  campaign.release_radices = {2, 3, 4};
  campaign.routing_radices = {4, 64};
  campaign.max_steps = 1;  // the single-kill part is the test above
  campaign.random_trials = 5000;
  campaign.seed = seed;
  const FenceCampaignCounts counts = run_fence_campaign(campaign, model(), {});
  expect_clean(counts);
  EXPECT_EQ(counts.random_runs, 5000u);
}

TEST(FenceSim, RandomDoubleAndTripleFailuresFirstHalf) {
  random_half(1);
}
TEST(FenceSim, RandomDoubleAndTripleFailuresSecondHalf) {
  random_half(2);
}

// Finite NIC bandwidth: the release tree spreads the root's copies, so a
// large release covers the ranks sooner than the flat routing tree's.
TEST(FenceSim, ReleaseTreeBeatsTheFlatRoutingTreeOnALargeRelease) {
  FenceSimCase c;
  c.size = 64;
  c.generations = 1;
  c.blob_bytes = 16384;  // a 1 MiB release
  c.config.routing_radix = 64;
  c.config.release_radix = 4;
  c.config.low_radix_release = true;
  const FenceSimResult tree = run_fence_sim(c, model());
  c.config.low_radix_release = false;
  const FenceSimResult flat = run_fence_sim(c, model());
  ASSERT_TRUE(tree.ok && flat.ok);
  EXPECT_LT(tree.coverage, flat.coverage);
}

// Pipelined release (fence_release_segment): every relay killed at every
// message step with releases of ~8 segments (so relays die between
// segments), N = 8 and 16.
TEST(FenceSim, EveryRelayKilledAtEveryStepWithSegments) {
  FenceCampaign campaign;
  campaign.sizes = {8, 16};
  campaign.release_radices = {2, 4};
  campaign.routing_radices = {4, 64};
  campaign.release_segment = 64;
  campaign.max_blob = 64;
  campaign.random_trials = 2000;
  const FenceCampaignCounts counts = run_fence_campaign(campaign, model(), {});
  expect_clean(counts);
  EXPECT_GT(counts.single_runs, 1000u);
}

// At 16 ranks with the bytes dominating (a 1 MiB release at 10 Gbit/s),
// store-and-forward radix 4 puts ~7-8 copies of the release on the
// critical path against the flat routing tree's 15; pipelined, the root's
// 4 copies bound it. Simulator figures are exact (deterministic).
TEST(FenceSim, PipelinedReleaseRaisesTheRatioOverTheFlatTree) {
  const sim::SimConfig config = model();
  FenceSimCase c;
  c.size = 16;
  c.generations = 1;
  c.blob_bytes = 64 * 1024;
  c.config.routing_radix = 64;
  c.config.release_radix = 4;
  const auto coverage = [&](bool low, uint64_t segment) {
    c.config.low_radix_release = low;
    c.config.release_segment = segment;
    const FenceSimResult r = run_fence_sim(c, config);
    EXPECT_TRUE(r.ok) << r.failure;
    return static_cast<double>(r.coverage);
  };
  const double flat = coverage(false, 0);
  const double store = coverage(true, 0);
  const double pipelined = coverage(true, 64 * 1024);
  EXPECT_LT(flat / store, 2.6);
  EXPECT_GT(flat / pipelined, 3.4);
}

}  // namespace
}  // namespace grove::runtime
