// Plan (stream order, joins), BlockLayout and Fold, and the size of every
// algorithm's schedule at a large rank count.
#include "coll/plan.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "coll/allgather.hpp"
#include "coll/allgatherv.hpp"
#include "coll/allreduce.hpp"
#include "coll/alltoall.hpp"
#include "coll/alltoallv.hpp"
#include "coll/gather.hpp"
#include "coll/layout.hpp"
#include "coll/reduce.hpp"
#include "coll/reduce_scatter.hpp"
#include "coll/scatter.hpp"

namespace grove::coll {
namespace {

std::vector<StepId> deps_of(const sched::Schedule& s, StepId id) {
  const sched::Step& step = s.steps[id];
  return {s.deps.begin() + step.deps_begin, s.deps.begin() + step.deps_end};
}

TEST(Plan, OrdersAStreamOnlyWhenItCouldReorder) {
  Plan plan("test");
  const auto copy = *plan.copy(input_region(0, 4), output_region(0, 4));
  // Two sends with the same dependencies: step order already orders them.
  const StepId a = plan.send(1, 0, output_region(0, 4), {copy});
  const StepId b = plan.send(1, 0, output_region(0, 4), {copy});
  // A later send with no dependency could overtake b: it must wait for b.
  const StepId c = plan.send(1, 0, input_region(0, 4));
  // Another channel or peer is another stream.
  const StepId d = plan.send(1, 1, input_region(0, 4));
  const StepId e = plan.send(2, 0, input_region(0, 4));
  // Receives: the first has a dependency, so the second waits for it.
  const StepId f = plan.recv(1, 0, output_region(0, 4), {copy});
  const StepId g = plan.recv(1, 0, output_region(4, 4));
  const sched::Schedule s = plan.finish();
  EXPECT_EQ(deps_of(s, a), std::vector<StepId>{copy});
  EXPECT_EQ(deps_of(s, b), std::vector<StepId>{copy});
  EXPECT_EQ(deps_of(s, c), std::vector<StepId>{b});
  EXPECT_TRUE(deps_of(s, d).empty());
  EXPECT_TRUE(deps_of(s, e).empty());
  EXPECT_EQ(deps_of(s, g), std::vector<StepId>{f});
  EXPECT_EQ(s.steps[c].channel, 0);
}

TEST(Plan, ChannelsWrapAndZeroCopiesVanish) {
  Plan plan("test");
  const StepId a = plan.send(0, 64 + 5, input_region(0, 1));
  EXPECT_FALSE(plan.copy(input_region(0, 0), output_region(0, 0)));
  const StepId j = plan.join({a});
  const Region r1 = plan.take_scratch(10);
  const Region r2 = plan.take_scratch(6);
  const sched::Schedule s = plan.finish();
  EXPECT_EQ(s.steps[a].channel, 5);
  EXPECT_EQ(deps_of(s, j), std::vector<StepId>{a});
  EXPECT_EQ(r1.offset, 0u);
  EXPECT_EQ(r2.offset, 10u);
  EXPECT_EQ(s.scratch_bytes, 16u);
}

TEST(Layout, SplitAndFold) {
  const BlockLayout split = BlockLayout::split(10, 4, 4);  // 3,3,2,2 elements
  EXPECT_EQ(split.lengths, (std::vector<size_t>{12, 12, 8, 8}));
  EXPECT_EQ(split.offsets, (std::vector<size_t>{0, 12, 24, 32}));
  EXPECT_EQ(split.span_length(1, 3), 20u);
  EXPECT_EQ(split.span_offset(4), 40u);
  const Fold fold(7);  // p2 = 4, rem = 3: pairs (0,1) (2,3) (4,5), then 6
  EXPECT_EQ(fold.p2, 4);
  EXPECT_EQ(fold.rem, 3);
  EXPECT_EQ(fold.steps, 2);
  EXPECT_TRUE(fold.sits_out(5));
  EXPECT_TRUE(fold.absorbs(4));
  EXPECT_FALSE(fold.sits_out(6));
  EXPECT_EQ(fold.virtual_of(6), 3);
  EXPECT_EQ(fold.virtual_of(4), 2);
  EXPECT_EQ(fold.virtual_of(5), -1);
  EXPECT_EQ(fold.real_of(3), 6);
  EXPECT_EQ(fold.first_real(1), 2);
  EXPECT_EQ(fold.end_real(1), 4);
  EXPECT_EQ(Fold(1).p2, 1);
  EXPECT_EQ(Fold(16).rem, 0);
}

// At 1024 ranks no rank's schedule may hold more dependency entries than a
// small multiple of its steps (a quadratic list would show here) and every
// schedule stays within O(N log N) steps.
TEST(Schedules, StayNearLinearAtLargeSizes) {
  const int n = 1024;
  std::vector<std::pair<std::string, sched::Schedule>> built;
  for (int rank : {0, 517, n - 1}) {
    auto spec = [](const char* coll, const char* name) { return parse_algorithm(coll, name); };
    for (const char* name : {"flat", "binomial", "chain"})
      built.emplace_back(name, build_scatter({rank, n, 3, 8, spec("scatter", name)}));
    for (const char* name : {"flat", "binomial", "kary:4"})
      built.emplace_back(name, build_gather({rank, n, 3, 8, spec("gather", name)}));
    for (const char* name :
         {"ring", "recursive_doubling", "bruck", "neighbor_exchange", "gather_bcast"})
      built.emplace_back(name, build_allgather({rank, n, 8, false, spec("allgather", name)}));
    for (const char* name : {"ring", "gather_bcast"}) {
      std::vector<size_t> counts(n, 3), offsets(n);
      for (int i = 0; i < n; ++i)
        offsets[static_cast<size_t>(i)] = static_cast<size_t>(n - 1 - i) * 3;
      built.emplace_back(
          name, build_allgatherv({rank, n, counts, offsets, false, spec("allgatherv", name)}));
    }
    for (const char* name : {"linear", "pairwise", "bruck"})
      built.emplace_back(name, build_alltoall({rank, n, 8, true, spec("alltoall", name), 0}));
    built.emplace_back("alltoallv", build_alltoallv({rank,
                                                     n,
                                                     std::vector<size_t>(n, 2),
                                                     {},
                                                     std::vector<size_t>(n, 2),
                                                     {},
                                                     spec("alltoallv", "pairwise"),
                                                     0}));
    for (const char* name : {"binomial", "rabenseifner"})
      built.emplace_back(name, build_reduce({rank, n, 3, 5000, Datatype::float32, ReduceOp::sum,
                                             false, spec("reduce", name)}));
    for (const char* name : {"recursive_doubling", "ring", "rabenseifner"})
      built.emplace_back(name, build_allreduce({rank, n, 5000, Datatype::float32, ReduceOp::sum,
                                                false, spec("allreduce", name)}));
    for (const char* name : {"ring", "recursive_halving"})
      built.emplace_back(name, build_reduce_scatter({rank, n, 3, Datatype::int32, ReduceOp::sum,
                                                     spec("reduce_scatter", name)}));
  }
  for (const auto& [name, s] : built) {
    SCOPED_TRACE(s.algorithm);
    EXPECT_LE(s.steps.size(), size_t{8} * n + 100);
    EXPECT_LE(s.deps.size(), 4 * s.steps.size() + 100);
  }
}

}  // namespace
}  // namespace grove::coll
