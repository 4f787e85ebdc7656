// run_on_sim's scale machinery: schedules shared by the ranks they cover
// give the very run each rank's own schedule gives, the estimate made before
// a run, the refusal of a run over the memory limit, and progress reports.

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "campaigns/sim_jobs.hpp"
#include "coll/algorithm.hpp"
#include "coll/alltoallv.hpp"
#include "coll/bcast.hpp"
#include "coll/layout.hpp"
#include "core/params.hpp"
#include "grove/error.hpp"
#include "model/sim_schedules.hpp"
#include "transport/sim/trace.hpp"

namespace grove::model {
namespace {

// The same job, but every schedule forgets its symmetry: each rank runs its own.
SimJob without_sharing(SimJob job) {
  auto build = job.build;
  job.build = [build](int rank) {
    sched::Schedule s = build(rank);
    s.symmetry = sched::Symmetry{};
    return s;
  };
  return job;
}

// A job run twice, sharing schedules and with every rank running its own,
// with per-rank times and traces.
struct TwoRuns {
  SimResult shared, own;
  sim::TraceVector shared_trace, own_trace;
};
TwoRuns run_shared_and_own(const SimJob& job, const sim::SimConfig& config) {
  TwoRuns runs;
  SimOptions options;
  options.per_rank = true;
  options.trace = &runs.shared_trace;
  runs.shared = run_on_sim(job, config, options);
  options.trace = &runs.own_trace;
  runs.own = run_on_sim(without_sharing(job), config, options);
  return runs;
}

// The two runs are one: times, messages, events and every message's record.
void expect_same_run(const TwoRuns& runs, const std::string& what) {
  EXPECT_EQ(runs.own.schedules_shared, 0u) << what;
  EXPECT_EQ(runs.shared.completion, runs.own.completion) << what;
  EXPECT_EQ(runs.shared.per_rank, runs.own.per_rank) << what;
  EXPECT_EQ(runs.shared.stats.messages_sent, runs.own.stats.messages_sent) << what;
  EXPECT_EQ(runs.shared.stats.events, runs.own.stats.events) << what;
  EXPECT_TRUE(runs.shared_trace.records == runs.own_trace.records) << what;
}

TEST(SimRun, SharedSchedulesRunExactlyLikeEachRanksOwn) {
  sim::SimConfig config;
  config.data = sim::DataMode::real;
  config.jitter = 0.4;
  config.seed = 5;
  config.threads = 2;
  config.ranks_per_node = 3;
  config.recv_us = 1.5;
  struct Case {
    JobShape shape;
    size_t shared, built;  // shared schedules, and schedules built with the checks
  };
  const std::vector<Case> cases = {
      {{"allreduce", "ring", 24, 1000, 0}, 1, 4},  // uneven chunks
      {{"allgather", "ring", 17, 40, 0}, 1, 4},
      {{"allgather", "neighbor_exchange", 16, 40, 0}, 2, 8},  // one per parity
      {{"allgatherv", "ring", 13, 30, 0}, 1, 4},              // blocks of 30, 31 and 32 bytes
      {{"reduce_scatter", "ring", 12, 20, 0}, 1, 4},
      {{"alltoall", "pairwise", 11, 24, 0}, 1, 4},
      {{"alltoall", "linear", 9, 8, 0}, 1, 4},
      {{"alltoall", "bruck", 13, 12, 0}, 1, 4},  // the rotation, block by block
      {{"alltoall", "bruck", 16, 8, 0}, 1, 4},
      // Three layouts (rank i sends rank j 30 + (i + 2j) mod 3 bytes), each
      // with its schedule and three checks.
      {{"alltoallv", "pairwise", 13, 30, 0}, 3, 12},
      {{"alltoallv", "pairwise", 16, 1, 0}, 3, 12},
      // Every third block empty: shifts by 3 keep them in place at 12 ranks.
      {{"alltoallv", "pairwise", 12, 0, 0}, 3, 12},
  };
  for (const auto& [shape, shared_count, built_count] : cases) {
    const SimJob job = make_sim_job(shape);
    const TwoRuns runs = run_shared_and_own(job, config);
    EXPECT_EQ(runs.shared.schedules_shared, shared_count) << job.what;
    // three checks per shared one
    EXPECT_EQ(runs.shared.schedules_built, built_count) << job.what;
    EXPECT_GE(runs.own.schedules_built, static_cast<size_t>(shape.size)) << job.what;
    expect_same_run(runs, job.what);
  }
}

TEST(SimRun, TheEstimateCountsSharedSchedulesExactly) {
  sim::SimConfig config;
  config.data = sim::DataMode::sizes;
  const SimResult ring = run_on_sim(make_sim_job({"allreduce", "ring", 50, 4000, 0}), config);
  EXPECT_FALSE(ring.estimate.sampled);
  EXPECT_EQ(ring.estimate.messages, static_cast<double>(ring.stats.messages_sent));
  EXPECT_EQ(ring.estimate.bytes, static_cast<double>(ring.stats.bytes_sent));
  EXPECT_GT(ring.estimate.memory, 0);
  // Bruck's alltoall: one shared schedule, so its counts are exact too.
  const SimResult bruck = run_on_sim(make_sim_job({"alltoall", "bruck", 37, 512, 0}), config);
  EXPECT_FALSE(bruck.estimate.sampled);
  EXPECT_EQ(bruck.schedules_shared, 1u);
  EXPECT_EQ(bruck.estimate.messages, static_cast<double>(bruck.stats.messages_sent));
  EXPECT_EQ(bruck.estimate.bytes, static_cast<double>(bruck.stats.bytes_sent));
  EXPECT_EQ(bruck.estimate.events, static_cast<double>(bruck.stats.events));
  // Its steps, counted once and standing for all 37 ranks: the own block's
  // copy and 37 rotation copies; per phase (distances 1 to 32) two joins,
  // two messages and the runs packed and unpacked (18 + 9 + 5 + 2 + 1 + 1 =
  // 36 each way); the last join and 36 copies out: 1 + 37 + 24 + 72 + 1 +
  // 36 = 171.
  EXPECT_EQ(bruck.estimate.steps, 37.0 * 171);
  // Per-rank schedules: from a sample, so only roughly.
  const SimResult tree = run_on_sim(make_sim_job({"bcast", "binomial", 1000, 64, 0}), config);
  EXPECT_TRUE(tree.estimate.sampled);
  const double sent = static_cast<double>(tree.stats.messages_sent);
  EXPECT_GT(tree.estimate.messages, sent / 2);
  EXPECT_LT(tree.estimate.messages, sent * 2);
}

// Bruck's alltoall at 10,000 ranks and 1 MiB, estimated without running
// (the run itself takes seconds; docs/simulator.md has its peak): one
// shared schedule, so exact counts, and far below the 2 GB the simulator
// aims at (per-rank schedules made it 32 GB, refused).
TEST(SimRun, BruckAlltoallAtTenThousandRanksIsEstimatedFromOneSchedule) {
  const SimJob job = make_sim_job({"alltoall", "bruck", 10000, 1 << 20, 0});
  sim::SimConfig config;
  config.data = sim::DataMode::sizes;
  SimSchedules schedules(job);
  const SimEstimate e = estimate_sim(job, config, schedules);
  EXPECT_FALSE(e.sampled);
  EXPECT_EQ(schedules.shared(), 1u);
  EXPECT_EQ(schedules.built(), 4u);  // the shared one and three checks
  // One message per rank and phase (14 phases); phase k carries the blocks
  // whose index j in [1, N) has bit k set.
  double blocks = 0;
  for (int bit = 1; bit < 10000; bit *= 2)
    for (int j = 1; j < 10000; ++j)
      blocks += (j & bit) != 0 ? 1 : 0;
  EXPECT_EQ(e.messages, 10000.0 * 14);
  EXPECT_EQ(e.bytes, 10000.0 * blocks * (1 << 20));
  EXPECT_LT(e.memory, 1e9);
  EXPECT_GT(e.memory, 0);
}

// With every third block empty and 13 ranks (not a multiple of 3) the empty
// blocks of ranks with equal layouts fall at other places relative to the
// rank (a shift by 3 moves them across the wrap): every rank keeps its own
// schedule, built once, and the run is the same.
TEST(SimRun, AlltoallvRanksWhoseEmptyBlocksFallElsewhereRunTheirOwn) {
  sim::SimConfig config;
  config.data = sim::DataMode::real;
  config.jitter = 0.3;
  const SimJob job = make_sim_job({"alltoallv", "pairwise", 13, 0, 0});
  SimSchedules schedules(job);
  for (int rank = 0; rank < job.size; ++rank)
    EXPECT_EQ(schedules.ranks_of(*schedules.of(rank)), 1u) << rank;
  EXPECT_EQ(schedules.built(), 13u);
  EXPECT_EQ(schedules.shared(), 0u);
  const TwoRuns runs = run_shared_and_own(job, config);
  EXPECT_EQ(runs.shared.schedules_shared, 0u);
  expect_same_run(runs, job.what);
  uint64_t messages = 0;  // rank i sends j (i + 2j) mod 3 bytes: none when 0
  for (int i = 0; i < 13; ++i)
    for (int j = 0; j < 13; ++j)
      messages += j != i && (i + 2 * j) % 3 != 0 ? 1 : 0;
  EXPECT_EQ(runs.shared.stats.messages_sent, messages);
}

// Every rank's counts its own (rank i sends rank j 1 + (7i + j) mod 70
// bytes): no schedule stands for another rank. Sorting keeps the first 64
// layouts' schedules, which their ranks then run; the other ranks build
// theirs when asked, once each, and the run is as without sharing.
TEST(SimRun, AlltoallvWithEveryRanksOwnLayoutsBuildsEachScheduleOnce) {
  constexpr int n = 70;
  auto count = [](int from, int to) {
    return size_t{1} + static_cast<size_t>((7 * from + to) % n);
  };
  auto counts = [count](int rank, bool sending) {
    std::vector<size_t> out;
    for (int p = 0; p < n; ++p)
      out.push_back(sending ? count(rank, p) : count(p, rank));
    return out;
  };
  auto total = [](const std::vector<size_t>& v) {
    size_t t = 0;
    for (const size_t x : v)
      t += x;
    return t;
  };
  SimJob job;
  job.what = "alltoallv pairwise, own counts";
  job.size = n;
  job.build = [counts](int rank) {
    coll::AlltoallvArgs a;
    a.rank = rank;
    a.size = n;
    a.send_counts = counts(rank, true);
    a.recv_counts = counts(rank, false);
    a.algorithm = coll::parse_algorithm("alltoallv", "pairwise");
    return coll::build_alltoallv(a);
  };
  job.input_bytes = [counts, total](int rank) { return total(counts(rank, true)); };
  job.output_bytes = [counts, total](int rank) { return total(counts(rank, false)); };
  job.layouts = [counts](int rank) {
    coll::BlockLayout in = coll::BlockLayout::packed(counts(rank, true));
    coll::BlockLayout out = coll::BlockLayout::packed(counts(rank, false));
    return RankLayouts{in.offsets, in.lengths, out.offsets, out.lengths};
  };
  SimSchedules schedules(job);
  for (int rank = 0; rank < n; ++rank)
    EXPECT_EQ(schedules.ranks_of(*schedules.of(rank)), 1u) << rank;
  EXPECT_EQ(schedules.built(), static_cast<size_t>(n));
  EXPECT_EQ(schedules.shared(), 0u);
  sim::SimConfig config;
  config.jitter = 0.2;
  const TwoRuns runs = run_shared_and_own(job, config);
  EXPECT_EQ(runs.shared.stats.messages_sent, static_cast<uint64_t>(n) * (n - 1));
  expect_same_run(runs, job.what);
}

// The shapes of bcast scatter_allgather's ranks (coll::bcast_shape) that
// stand for several ranks: the schedules a run shares.
size_t shared_bcast_shapes(int size, size_t bytes, int root) {
  std::map<uint64_t, int> ranks;
  for (int rank = 0; rank < size; ++rank)
    ++ranks[coll::bcast_shape(coll::BcastArgs{
        rank, size, root, bytes, coll::parse_algorithm("bcast", "scatter_allgather")})];
  size_t out = 0;
  for (const auto& [shape, count] : ranks)
    out += shape != 0 && count > 1 ? 1 : 0;
  return out;
}

// One schedule per shape, empty blocks kept as steps that post nothing:
// the very run of every rank's own schedule, trace for trace.
TEST(SimRun, BcastScatterAllgatherSharedByShapeRunsExactlyLikeEachRanksOwn) {
  sim::SimConfig config;
  config.data = sim::DataMode::real;
  config.jitter = 0.4;
  config.seed = 3;
  config.ranks_per_node = 4;
  config.recv_us = 1;
  for (const JobShape& shape : {JobShape{"bcast", "scatter_allgather", 37, 50, 0},  // 12 empty
                                JobShape{"bcast", "scatter_allgather", 23, 1000, 5},
                                JobShape{"bcast", "scatter_allgather", 64, 3000, 63}}) {
    const SimJob job = make_sim_job(shape);
    const TwoRuns runs = run_shared_and_own(job, config);
    EXPECT_EQ(runs.shared.schedules_shared,
              shared_bcast_shapes(shape.size, shape.bytes, shape.root))
        << job.what;
    EXPECT_GT(runs.shared.schedules_shared, 2u) << job.what;
    expect_same_run(runs, job.what);
  }
}

// bcast scatter_allgather at 10,000 ranks and 1 MiB, estimated without
// running: one schedule per shape (one per rank made it 20 GB, refused).
// Relabelled, a shape's empty blocks are other ranks' blocks, so its
// counts are estimates: within 1 % of N (N - 1) messages (each rank but the
// root receives its part of the scatter, then every block outside its part
// but the 13 empty ones).
TEST(SimRun, BcastScatterAllgatherAtTenThousandRanksIsEstimatedFromItsShapes) {
  constexpr int n = 10000;
  const SimJob job = make_sim_job({"bcast", "scatter_allgather", n, 1 << 20, 0});
  sim::SimConfig config;
  config.data = sim::DataMode::sizes;
  SimSchedules schedules(job);
  const SimEstimate e = estimate_sim(job, config, schedules);
  EXPECT_EQ(schedules.shared(), shared_bcast_shapes(n, 1 << 20, 0));
  EXPECT_LE(schedules.shared(), 32u);
  EXPECT_LT(schedules.built(), 4 * 40u);  // a schedule per shape and three checks
  EXPECT_GT(e.messages, 0.99 * n * (n - 1));
  EXPECT_LT(e.messages, 1.01 * n * (n - 1));
  EXPECT_LT(e.memory, 2e9);
  EXPECT_GT(e.memory, 0);
}

// alltoallv pairwise at 10,000 ranks and 1 MiB, estimated without running:
// three schedules (one per distinct pair of layouts), so exact counts, and
// below 2 GB (one schedule per rank made it 18 GB, refused).
TEST(SimRun, AlltoallvPairwiseAtTenThousandRanksIsEstimatedFromThreeSchedules) {
  constexpr int n = 10000;
  constexpr size_t size = 1 << 20;
  const SimJob job = make_sim_job({"alltoallv", "pairwise", n, size, 0});
  sim::SimConfig config;
  config.data = sim::DataMode::sizes;
  SimSchedules schedules(job);
  const SimEstimate e = estimate_sim(job, config, schedules);
  EXPECT_FALSE(e.sampled);
  EXPECT_EQ(schedules.shared(), 3u);
  EXPECT_EQ(schedules.built(), 12u);  // the three and three checks each
  // Rank i sends every j != i size + (i + 2j) mod 3 bytes.
  double bytes = 0;
  for (int i = 0; i < n; ++i) {
    size_t mine = 0;
    for (int j = 0; j < n; ++j)
      if (j != i) mine += size + static_cast<size_t>((i + 2 * j) % 3);
    bytes += static_cast<double>(mine);
  }
  EXPECT_EQ(e.messages, static_cast<double>(n) * (n - 1));
  EXPECT_EQ(e.bytes, bytes);
  EXPECT_EQ(e.events, 4.0 * n * (n - 1));
  EXPECT_LT(e.memory, 2e9);
  EXPECT_GT(e.memory, 0);
}

TEST(SimRun, ARunOverTheMemoryLimitIsRefusedWithItsEstimate) {
  const SimJob job = make_sim_job({"alltoall", "linear", 64, 1024, 0});
  SimOptions options;
  options.max_memory = 1000;
  try {
    run_on_sim(job, sim::SimConfig{}, options);
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.code(), Errc::invalid_argument);
    for (const char* part :
         {"alltoall linear", "not run", "messages", "events", "at the peak", "sim_max_memory"})
      EXPECT_NE(what.find(part), std::string::npos) << part << " missing: " << what;
  }
  options.max_memory = 0;  // no limit
  EXPECT_NO_THROW(run_on_sim(job, sim::SimConfig{}, options));
  {
    params::ScopedSet limit("sim_max_memory", "1KiB");
    EXPECT_EQ(sim_max_memory(), 1024u);
    EXPECT_THROW(run_on_sim(job, sim::SimConfig{}), Error);
  }
  EXPECT_GT(sim_max_memory(), 0u);  // auto: half the machine
  EXPECT_THROW(params::Registry::global().set("sim_max_memory", "lots", params::Source::api),
               Error);
}

TEST(SimRun, ProgressIsReportedWhileRunning) {
  SimOptions options;
  options.progress_seconds = 0;  // every check
  std::vector<SimProgress> seen;
  options.progress = [&](const SimProgress& p) { seen.push_back(p); };
  sim::SimConfig config;
  config.data = sim::DataMode::sizes;
  // 260 * 259 messages, about 270,000 events: checked every 65,536.
  const SimResult r = run_on_sim(make_sim_job({"allgather", "ring", 260, 64, 0}), config, options);
  ASSERT_GE(seen.size(), 3u);
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].ranks, 260);
    EXPECT_GT(seen[i].events_expected, 0);
    EXPECT_LE(seen[i].events, r.stats.events);
    if (i > 0) {
      EXPECT_GT(seen[i].events, seen[i - 1].events);
    }
  }
}

}  // namespace
}  // namespace grove::model
