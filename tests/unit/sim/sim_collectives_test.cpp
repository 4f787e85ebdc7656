// Every algorithm of every collective the simulator knows, run in
// real-bytes mode at sizes from 1 to 1024 ranks, results checked byte for
// byte (model/sim_jobs.cpp fills and checks; reductions are uint8 sums).
// Algorithms whose message count grows as N^2 stop at 256 ranks to keep the
// test bounded (a few seconds per collective in a Debug build).

#include <gtest/gtest.h>

#include <algorithm>

#include <fmt/format.h>

#include "campaigns/sim_jobs.hpp"
#include "coll/algorithm.hpp"
#include "grove/error.hpp"

namespace grove::model {
namespace {

bool quadratic(const std::string& collective, const std::string& algorithm) {
  if (collective.starts_with("alltoall") && algorithm != "bruck") return true;
  return algorithm.starts_with("ring") || algorithm.starts_with("neighbor_exchange") ||
         algorithm.starts_with("scatter_allgather") || algorithm.starts_with("chain") ||
         algorithm.starts_with("pipeline") || algorithm.starts_with("flat");
}

void run_everywhere(const std::string& collective) {
  sim::SimConfig config;
  config.data = sim::DataMode::real;
  config.ranks_per_node = 4;  // both the NIC and the intra-node path
  config.threads = 2;
  config.jitter = 0.3;
  for (const std::string& algorithm : coll::algorithm_examples(collective)) {
    for (int n : {1, 2, 3, 7, 64, 1024}) {
      if (n == 1024 && quadratic(collective, algorithm)) n = 256;
      const std::vector<std::string> runnable = coll::algorithm_examples_for(collective, n, false);
      if (std::find(runnable.begin(), runnable.end(), algorithm) == runnable.end()) continue;
      for (size_t bytes : {size_t{1}, size_t{1000}}) {
        if (n >= 256 && bytes > 1) continue;
        JobShape shape{collective, algorithm, n, bytes, n / 3};
        SCOPED_TRACE(fmt::format("{} {} on {} ranks, {} B", collective, algorithm, n, bytes));
        EXPECT_NO_THROW(run_on_sim(make_sim_job(shape), config));
      }
    }
  }
}

TEST(SimCollectives, Bcast) {
  run_everywhere("bcast");
}
TEST(SimCollectives, Barrier) {
  run_everywhere("barrier");
}
TEST(SimCollectives, Allgather) {
  run_everywhere("allgather");
}
TEST(SimCollectives, Allgatherv) {
  run_everywhere("allgatherv");
}
TEST(SimCollectives, Gather) {
  run_everywhere("gather");
}
TEST(SimCollectives, Scatter) {
  run_everywhere("scatter");
}
TEST(SimCollectives, Alltoall) {
  run_everywhere("alltoall");
}
TEST(SimCollectives, Alltoallv) {
  run_everywhere("alltoallv");
}
TEST(SimCollectives, Reduce) {
  run_everywhere("reduce");
}
TEST(SimCollectives, Allreduce) {
  run_everywhere("allreduce");
}
TEST(SimCollectives, ReduceScatter) {
  run_everywhere("reduce_scatter");
}

TEST(SimCollectives, EveryCollectiveTheSimulatorKnowsIsTested) {
  for (const std::string& c : sim_collectives())
    EXPECT_TRUE(c == "bcast" || c == "barrier" || c == "allgather" || c == "allgatherv" ||
                c == "gather" || c == "scatter" || c == "alltoall" || c == "alltoallv" ||
                c == "reduce" || c == "allreduce" || c == "reduce_scatter" || c == "release")
        << c << " has no correctness test here";
}

TEST(SimCollectives, AWrongResultIsReported) {
  // A bcast whose root does not send: the others' buffers stay zero, and a
  // stall is reported naming a waiting rank (nothing is left in flight).
  JobShape shape{"bcast", "binomial", 4, 16, 0};
  SimJob job = make_sim_job(shape);
  auto build = job.build;
  job.build = [build](int rank) {
    sched::Schedule s = build(rank);
    if (rank == 0) s.steps.clear(), s.deps.clear();
    return s;
  };
  sim::SimConfig config;
  try {
    run_on_sim(job, config);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::timeout);
    EXPECT_NE(std::string(e.what()).find("did not finish"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace grove::model
