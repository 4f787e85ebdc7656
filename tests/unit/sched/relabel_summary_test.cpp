// relabel_summary_admits (src/sched/step_graph.hpp) for a layout whose
// blocks differ in length: a region as long as the schedule's own block is
// bounded by the running rank's own block, and the summary agrees with
// validating every relabelled step.

#include <gtest/gtest.h>

#include <memory>
#include <numeric>
#include <vector>

#include "coll/algorithm.hpp"
#include "coll/allgatherv.hpp"
#include "grove/error.hpp"
#include "sched/executor.hpp"
#include "sched/step_graph.hpp"

namespace grove::sched {
namespace {

TEST(RelabelSummary, BoundsTheOwnBlockByTheRunningRanksOwnLength) {
  const std::vector<size_t> counts{10, 11, 12, 10, 11, 12, 13};
  const int n = static_cast<int>(counts.size());
  coll::AllgathervArgs args;
  args.rank = 2;  // built for a rank whose block is longer than most
  args.size = n;
  args.counts = counts;
  args.algorithm = coll::parse_algorithm("allgatherv", "ring");
  const Schedule s = coll::build_allgatherv(args);
  ASSERT_TRUE(s.symmetry.declared());
  const StepGraph graph(s);
  const size_t total = std::accumulate(counts.begin(), counts.end(), size_t{0});
  std::vector<std::byte> in(16), out(total);
  for (int rank = 0; rank < n; ++rank) {
    const int shift = s.symmetry.shift_of(rank);
    ASSERT_GE(shift, 0);
    for (const size_t input :
         {counts[static_cast<size_t>(rank)] - 1, counts[static_cast<size_t>(rank)]}) {
      const Buffers buffers{in.data(), input, out.data(), total};
      const ValidationTarget target{rank, n, &buffers, true};
      bool valid = true;
      try {
        validate_steps(s, shift, target);
      } catch (const Error&) {
        valid = false;
      }
      // An input one byte short of the rank's own block is refused; one
      // exactly as long is admitted without checking step by step (before,
      // only inputs as long as the longest block were).
      EXPECT_EQ(valid, input == counts[static_cast<size_t>(rank)]) << rank;
      if (rank != args.rank) {
        EXPECT_EQ(relabel_summary_admits(graph, s, target), valid) << rank;
      }
    }
  }
}

}  // namespace
}  // namespace grove::sched
