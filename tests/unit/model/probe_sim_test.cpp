// `grove probe`'s procedure (model/probe.hpp) on the simulator's pLogP mode:
// it must recover the table the simulator was configured with. In that mode
// a message of m bytes takes L + g(m) one way and its sender's completion
// comes g(m) after posting (docs/simulator.md), so L and g(m) are what the
// procedure can see; o_s and o_r shape nothing a sender or receiver waits
// for there, and are checked only for what the simulator makes of them.

#include <gtest/gtest.h>

#include <chrono>
#include <memory>

#include <fmt/format.h>

#include "grove/error.hpp"
#include "model/probe.hpp"
#include "model/probe_fit.hpp"
#include "transport/sim/sim_world.hpp"

namespace grove::model::probe {
namespace {

using namespace std::chrono_literals;

constexpr uint32_t kContext = 9;

std::shared_ptr<const sim::PlogpTable> linear_table() {
  // L = 5 us; g(m) = 2 us + 1 ns/B (1 GB/s); o_s = o_r = 1 us + 0.5 ns/B.
  const double m = 4 << 20;
  return std::make_shared<sim::PlogpTable>(
      sim::PlogpTable::from_rows(5, {{0, 1, 1, 2}, {m, 1 + m * 5e-4, 1 + m * 5e-4, 2 + m * 1e-3}}));
}

// A rendezvous-like jump: g doubles between 64 KiB and 64 KiB + 1.
std::shared_ptr<const sim::PlogpTable> bent_table() {
  return std::make_shared<sim::PlogpTable>(
      sim::PlogpTable::from_rows(3, {{0, 0.5, 0.5, 1},
                                     {65536, 10, 10, 66.5},
                                     {65537, 20, 20, 140},
                                     {1 << 22, 1000, 1000, 4300}}));
}

struct SimProbe {
  explicit SimProbe(std::shared_ptr<const sim::PlogpTable> table, int threads = 1) {
    sim::SimConfig config;
    config.model = sim::CostModel::plogp;
    config.data = sim::DataMode::real;  // commands carry bytes
    config.threads = threads;
    config.plogp = std::move(table);
    world = std::make_unique<sim::SimWorld>(2, config);
    peer = std::make_unique<Responder>(world->transport(1), 0, kContext);
    link = std::make_unique<Link>(
        world->transport(0), 1, kContext, [this] { peer->pump(); }, 60000ms);
  }
  ProbeResult run(ProbeOptions options) {
    options.batch_us = 20;
    ProbeResult r = run_probe(*link, options);
    stop_peer(*link);
    link->wait([this] { return peer->stopped(); }, "the peer's stop");
    return r;
  }
  std::unique_ptr<sim::SimWorld> world;
  std::unique_ptr<Responder> peer;
  std::unique_ptr<Link> link;
};

void expect_within(double got, double want, double relative, const std::string& what) {
  EXPECT_NEAR(got, want, relative * want) << what;
}

TEST(ProbeSim, RecoversLatencyAndGapOfALinearTable) {
  const auto table = linear_table();
  SimProbe probe(table);
  ProbeOptions options;
  options.max_bytes = 1 << 20;
  const ProbeResult r = probe.run(options);
  EXPECT_DOUBLE_EQ(r.clock_overhead_us, 0);  // virtual time
  expect_within(r.latency_us, 5, 0.05, "L");
  expect_within(r.g0_us, 2, 0.05, "g(0) by flooding");
  ASSERT_GE(r.sizes.size(), 22u);  // 0, 1 .. 1 MiB, and on while g is sub-linear
  EXPECT_EQ(r.sizes.front().bytes, 0u);
  EXPECT_EQ(r.zero_recheck, ZeroRecheck::kept) << "the second look at size 0 equals the first";
  EXPECT_DOUBLE_EQ(r.second_rtt0_us, r.first_rtt0_us);
  for (const SizePoint& p : r.sizes) {
    const double m = static_cast<double>(p.bytes);
    expect_within(p.g_us, table->g_us(m), 0.05, fmt::format("g({})", p.bytes));
    // One way is L + g(m), back L + g(0).
    expect_within(p.rtt.median, 2 * 5 + table->g_us(m) + 2, 0.05, fmt::format("RTT({})", p.bytes));
    // The sender completes when its last byte left: o_s reads g(m) here.
    expect_within(p.os.median, table->g_us(m), 0.05, fmt::format("o_s({})", p.bytes));
    EXPECT_DOUBLE_EQ(p.orecv.median, 0) << "the reply had arrived: nothing left to wait for";
    EXPECT_FALSE(p.midpoint) << "a straight line has no bend";
  }
  // Deterministic: every iteration equal, so the fewest iterations suffice.
  EXPECT_EQ(r.sizes[5].rtt.iterations, options.min_iterations);
  EXPECT_NEAR(r.sizes[5].rtt.ci90, 0, 1e-9);

  const sim::PlogpTable measured = r.table();
  const HockneyFit hockney = fit_hockney(measured);
  expect_within(hockney.alpha_us, 5 + 2, 0.05, "Hockney alpha = L + g0");
  expect_within(hockney.beta_us_per_byte, 1e-3, 0.05, "Hockney beta = G");

  const ReleaseFit release = fit_release(r);
  ASSERT_TRUE(release.valid) << release.why;
  expect_within(release.alpha_us, 5, 0.05, "release alpha = L");
  expect_within(release.c_us, 2, 0.05, "release c = g0");
  expect_within(release.bandwidth_gbps, 8, 0.05, "release B = 1/G");
}

// A second look at size 0 replaces the first only when clearly lower, and
// then re-derives L and the g(m) taken from RTT(0), not the flooded ones.
TEST(ProbeRebase, ASecondLookClearlyLowerReplacesSizeZero) {
  auto point = [](uint64_t bytes, double rtt, double g, bool flooded) {
    SizePoint p;
    p.bytes = bytes;
    p.rtt.median = rtt;
    p.g_us = g;
    p.flooded = flooded;
    return p;
  };
  ProbeResult first;
  first.sizes = {point(0, 14, 2, true), point(64, 20, 8, false), point(128, 30, 5, true)};
  first.g0_us = 2;
  first.g0_runs = 80;
  first.latency_us = 5;

  ZeroPoint lower{point(0, 10, 1.5, true), 40};
  lower.point.rtt.ci90 = 0.1;
  ProbeResult r = first;
  EXPECT_TRUE(rebase_size_zero(r, lower, 0.03));
  EXPECT_EQ(r.zero_recheck, ZeroRecheck::replaced);
  EXPECT_DOUBLE_EQ(r.first_rtt0_us, 14);
  EXPECT_DOUBLE_EQ(r.second_rtt0_us, 10);
  EXPECT_DOUBLE_EQ(r.sizes[0].rtt.median, 10);
  EXPECT_DOUBLE_EQ(r.g0_us, 1.5);
  EXPECT_EQ(r.g0_runs, 40);
  EXPECT_DOUBLE_EQ(r.latency_us, 3.5);      // 10 / 2 - 1.5
  EXPECT_DOUBLE_EQ(r.sizes[1].g_us, 11.5);  // 20 - 10 + 1.5
  EXPECT_DOUBLE_EQ(r.sizes[2].g_us, 5);     // flooded: measured, not derived

  // Within 2 eps (0.84 us of 14) of the first: kept.
  ProbeResult kept = first;
  EXPECT_FALSE(rebase_size_zero(kept, ZeroPoint{point(0, 13.2, 1.5, true), 40}, 0.03));
  EXPECT_DOUBLE_EQ(kept.sizes[0].rtt.median, 14);
  EXPECT_DOUBLE_EQ(kept.latency_us, 5);
  EXPECT_DOUBLE_EQ(kept.sizes[1].g_us, 8);
  EXPECT_EQ(kept.zero_recheck, ZeroRecheck::kept);

  // Lower, but within the second look's own 90% half-width: kept.
  ZeroPoint noisy{point(0, 10, 1.5, true), 40};
  noisy.point.rtt.ci90 = 5;
  EXPECT_FALSE(rebase_size_zero(kept, noisy, 0.03));
  // Under half of the first (the machine changed speed between the looks):
  // kept, and the second look recorded.
  EXPECT_FALSE(rebase_size_zero(kept, ZeroPoint{point(0, 6.9, 1.5, true), 40}, 0.03));
  EXPECT_EQ(kept.zero_recheck, ZeroRecheck::speed_changed);
  EXPECT_DOUBLE_EQ(kept.second_rtt0_us, 6.9);
  EXPECT_DOUBLE_EQ(kept.sizes[0].rtt.median, 14);
  // Higher (the machine slowed down): kept.
  EXPECT_FALSE(rebase_size_zero(kept, ZeroPoint{point(0, 20, 3, true), 40}, 0.03));
  EXPECT_DOUBLE_EQ(kept.sizes[0].rtt.median, 14);

  ProbeResult empty;
  EXPECT_THROW(rebase_size_zero(empty, lower, 0.03), Error);

  // The table's comment says what the second look did, from the outcome.
  auto comment = [](const ProbeResult& result) {
    const std::string text =
        table_text(result, PairInfo{0, 1, "intra-host", "sim", "sim"}, HockneyFit{}, ReleaseFit{});
    const size_t at = text.find("# size 0 measured twice");
    return at == std::string::npos ? std::string() : text.substr(at, text.find('\n', at) - at);
  };
  EXPECT_EQ(
      comment(r),
      "# size 0 measured twice: RTT(0) 10.0000 us at the end replaced 14.0000 us at the start");
  ProbeResult changed = first;
  rebase_size_zero(changed, ZeroPoint{point(0, 6.9, 1.5, true), 40}, 0.03);
  EXPECT_EQ(comment(changed),
            "# size 0 measured twice: RTT(0) 14.0000 us at the start, 6.9000 us at the end, kept: "
            "under half, the machine changed speed during the probe");
  ProbeResult same = first;
  rebase_size_zero(same, ZeroPoint{point(0, 13.2, 1.5, true), 40}, 0.03);
  EXPECT_EQ(comment(same), "");
}

TEST(ProbeSim, RecoversTheGapOfSendsPostedTogether) {
  // The linear table, with sends posted together 30% quicker from 16 KiB
  // (what a rendezvous's overlapping round trips look like): the probe's
  // gp(m) finds that gap and g(m) from the round trip is still one message's.
  sim::PlogpTable t = *linear_table();
  const double m = 4 << 20;
  t.set_posted_gap(
      {{0, 2}, {8192, 2 + 8.192}, {16384, 0.7 * (2 + 16.384)}, {m, 0.7 * (2 + m * 1e-3)}});
  const auto table = std::make_shared<const sim::PlogpTable>(t);
  SimProbe probe(table);
  ProbeOptions options;
  options.max_bytes = 1 << 20;
  options.release_copies = 0;
  const ProbeResult r = probe.run(options);
  for (const SizePoint& p : r.sizes) {
    const double bytes = static_cast<double>(p.bytes);
    expect_within(p.g_us, table->g_us(bytes), 0.05, fmt::format("g({})", p.bytes));
    expect_within(p.gp_us, table->send_gap_us(bytes), 0.05, fmt::format("gp({})", p.bytes));
  }
  // The table written from it has the rows, and reads back with them.
  const sim::PlogpTable measured = r.table();
  ASSERT_EQ(measured.posted_gap().size(), r.sizes.size());
  const std::string text = table_text(r, PairInfo{0, 1, "intra-host", "sim", "sim"},
                                      fit_hockney(measured), fit_release(r));
  EXPECT_EQ(sim::PlogpTable::parse(text, "probe output").posted_gap().size(), r.sizes.size());
}

TEST(ProbeSim, FloodingEverySizeGivesTheSameGap) {
  const auto table = linear_table();
  SimProbe probe(table, 8);
  ProbeOptions options;
  options.max_bytes = 64 << 10;
  options.flood = true;
  options.release_copies = 0;
  const ProbeResult r = probe.run(options);
  for (const SizePoint& p : r.sizes) {
    EXPECT_TRUE(p.flooded);
    expect_within(p.g_us, table->g_us(static_cast<double>(p.bytes)), 0.05,
                  fmt::format("flooded g({})", p.bytes));
  }
  EXPECT_TRUE(r.release.empty());
  EXPECT_FALSE(fit_release(r).valid);
}

TEST(ProbeSim, InsertsAMidpointWhereTheCurveBends) {
  const auto table = bent_table();
  SimProbe probe(table);
  ProbeOptions options;
  options.max_bytes = 1 << 20;
  options.release_copies = 0;
  const ProbeResult r = probe.run(options);
  expect_within(r.latency_us, 3, 0.05, "L");
  int midpoints = 0;
  for (const SizePoint& p : r.sizes) {
    expect_within(p.g_us, table->g_us(static_cast<double>(p.bytes)), 0.05,
                  fmt::format("g({})", p.bytes));
    if (p.midpoint) {
      ++midpoints;
      // Between the doubling sizes on either side of the jump.
      EXPECT_GT(p.bytes, 65536u);
      EXPECT_LT(p.bytes, 131072u);
    }
  }
  EXPECT_EQ(midpoints, 1);
  // The table written from it reads back with the same rows.
  const sim::PlogpTable measured = r.table();
  const std::string text = table_text(r, PairInfo{0, 1, "intra-host", "sim", "sim"},
                                      fit_hockney(measured), fit_release(r));
  const sim::PlogpTable again = sim::PlogpTable::parse(text, "probe output");
  // A pair on one host keeps the serial port; a pair across hosts declares
  // its sends share the NIC.
  EXPECT_FALSE(again.shared_port());
  const std::string across = table_text(r, PairInfo{0, 1, "inter-host", "a - b", "sim"},
                                        fit_hockney(measured), fit_release(r));
  EXPECT_TRUE(sim::PlogpTable::parse(across, "probe output").shared_port());
  ASSERT_EQ(again.rows().size(), measured.rows().size());
  EXPECT_NEAR(again.latency_us(), measured.latency_us(), 1e-5);
  for (size_t i = 0; i < again.rows().size(); ++i)
    EXPECT_NEAR(again.rows()[i].g_us, measured.rows()[i].g_us, 1e-5);
}

TEST(ProbeSim, RefusesBadCommandsAndOptions) {
  std::byte wire[Command::kWireBytes];
  Command c;
  c.in_bytes = kMaxBytes + 1;
  c.encode(wire);
  EXPECT_THROW(Command::decode(wire, 3), Error);
  c = Command{};
  c.encode(wire);
  wire[0] = std::byte{77};  // no such operation
  try {
    Command::decode(wire, 3);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::protocol);
    EXPECT_NE(std::string(e.what()).find("rank 3"), std::string::npos) << e.what();
  }
  // Receives posted together: at most kMaxPostedCount of them.
  c = Command{};
  c.op = Command::Op::exchange_posted;
  c.count = kMaxPostedCount;
  c.encode(wire);
  EXPECT_EQ(Command::decode(wire, 3).op, Command::Op::exchange_posted);
  c.count = kMaxPostedCount + 1;
  c.encode(wire);
  try {
    Command::decode(wire, 3);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::protocol);
    EXPECT_NE(std::string(e.what()).find("count 65"), std::string::npos) << e.what();
  }
  ProbeOptions o;
  o.max_bytes = 0;
  EXPECT_THROW(o.validate(), Error);
  o = ProbeOptions{};
  o.min_iterations = 5;
  o.max_iterations = 4;
  EXPECT_THROW(o.validate(), Error);
}

TEST(ProbeSim, AWaitThatNeverEndsTimesOut) {
  sim::SimConfig config;
  config.model = sim::CostModel::plogp;
  config.data = sim::DataMode::real;  // commands carry bytes
  config.plogp = linear_table();
  sim::SimWorld world(2, config);
  // No responder: the command is sent, but no reply ever comes.
  Link link(world.transport(0), 1, kContext, {}, 200ms);
  link.command({.count = 1, .rounds = 1, .in_bytes = 0, .out_bytes = 0});
  Op& reply = link.post_reply(0);
  try {
    link.wait(reply, "a reply that never comes");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::timeout);
  }
}

}  // namespace
}  // namespace grove::model::probe
