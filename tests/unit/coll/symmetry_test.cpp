// Schedules declared symmetric (sched::Symmetry) are exactly every covered
// rank's own schedule once relabelled: the simulator builds one schedule for
// all ranks of a ring or pairwise exchange and runs it relabelled, so any
// difference here would be a wrong simulation there.

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "coll/algorithm.hpp"
#include "coll/allgather.hpp"
#include "coll/allgatherv.hpp"
#include "coll/allreduce.hpp"
#include "coll/alltoall.hpp"
#include "coll/alltoallv.hpp"
#include "coll/bcast.hpp"
#include "coll/plan.hpp"
#include "coll/reduce_scatter.hpp"
#include "grove/error.hpp"
#include "harness.hpp"
#include "sched/executor.hpp"
#include "sched/schedule.hpp"
#include "transport/tag.hpp"

namespace grove::coll {
namespace {

using sched::Region;
using sched::Schedule;
using sched::Step;

struct SymmetryCase {
  std::string name;
  // The schedule of `rank` of `size`, for one call shape.
  std::function<Schedule(int rank, int size)> build;
  bool even_sizes_only = false;
};

std::vector<SymmetryCase> cases() {
  std::vector<SymmetryCase> out;
  for (const bool in_place : {false, true}) {
    const std::string place = in_place ? " in place" : "";
    out.push_back({"allgather ring" + place, [in_place](int rank, int size) {
                     AllgatherArgs a;
                     a.rank = rank;
                     a.size = size;
                     a.block_bytes = 3;
                     a.in_place = in_place;
                     a.algorithm = parse_algorithm("allgather", "ring");
                     return build_allgather(a);
                   }});
    out.push_back({"allgather neighbor_exchange" + place,
                   [in_place](int rank, int size) {
                     AllgatherArgs a;
                     a.rank = rank;
                     a.size = size;
                     a.block_bytes = 3;
                     a.in_place = in_place;
                     a.algorithm = parse_algorithm("allgather", "neighbor_exchange");
                     return build_allgather(a);
                   },
                   true});
    out.push_back({"allgatherv ring" + place, [in_place](int rank, int size) {
                     AllgathervArgs a;
                     a.rank = rank;
                     a.size = size;
                     for (int i = 0; i < size; ++i)
                       a.counts.push_back(1 + static_cast<size_t>(i % 3));
                     a.in_place = in_place;
                     a.algorithm = parse_algorithm("allgatherv", "ring");
                     return build_allgatherv(a);
                   }});
    for (const char* algo : {"linear", "pairwise", "bruck"}) {
      out.push_back({std::string("alltoall ") + algo + place, [in_place, algo](int rank, int size) {
                       AlltoallArgs a;
                       a.rank = rank;
                       a.size = size;
                       a.block_bytes = 2;
                       a.in_place = in_place;
                       a.posts = 3;
                       a.algorithm = parse_algorithm("alltoall", algo);
                       return build_alltoall(a);
                     }});
    }
    // Uneven chunks (the larger first) and a wider element.
    for (const size_t extra : {size_t{0}, size_t{5}}) {
      out.push_back({"allreduce ring" + place + " +" + std::to_string(extra),
                     [in_place, extra](int rank, int size) {
                       AllreduceArgs a;
                       a.rank = rank;
                       a.size = size;
                       a.count = 2 * static_cast<size_t>(size) + extra;
                       a.dtype = extra == 0 ? Datatype::int32 : Datatype::uint8;
                       a.in_place = in_place;
                       a.algorithm = parse_algorithm("allreduce", "ring");
                       return build_allreduce(a);
                     }});
    }
  }
  out.push_back({"reduce_scatter ring", [](int rank, int size) {
                   ReduceScatterArgs a;
                   a.rank = rank;
                   a.size = size;
                   a.count = 3;
                   a.dtype = Datatype::int32;
                   a.algorithm = parse_algorithm("reduce_scatter", "ring");
                   return build_reduce_scatter(a);
                 }});
  return out;
}

std::string region_text(const Region& r) {
  return std::to_string(static_cast<int>(r.buffer)) + ":" + std::to_string(r.offset) + "+" +
         std::to_string(r.length) + " mark " + std::to_string(static_cast<int>(r.mark)) + "/" +
         std::to_string(r.block) + "x" + std::to_string(r.span);
}

std::string step_text(const Step& s) {
  return std::to_string(static_cast<int>(s.kind)) + " peer " + std::to_string(s.peer) + " ch " +
         std::to_string(s.channel) + " src " + region_text(s.src) + " dst " + region_text(s.dst) +
         " deps [" + std::to_string(s.deps_begin) + "," + std::to_string(s.deps_end) + ")";
}

// Compares `own` (built for its rank) with `shared` relabelled by `shift`.
void expect_relabelled_equal(const Schedule& shared, int shift, const Schedule& own,
                             const std::string& what) {
  ASSERT_EQ(own.steps.size(), shared.steps.size()) << what;
  ASSERT_EQ(own.deps, shared.deps) << what;
  EXPECT_EQ(own.scratch_bytes, shared.scratch_bytes) << what;
  EXPECT_EQ(own.max_sends, shared.max_sends) << what;
  EXPECT_EQ(own.max_recvs, shared.max_recvs) << what;
  EXPECT_EQ(own.algorithm, shared.algorithm) << what;
  EXPECT_EQ(own.symmetry.size, shared.symmetry.size) << what;
  EXPECT_EQ(own.symmetry.period, shared.symmetry.period) << what;
  EXPECT_EQ(own.symmetry.offsets, shared.symmetry.offsets) << what;
  EXPECT_EQ(own.symmetry.lengths, shared.symmetry.lengths) << what;
  EXPECT_EQ(own.symmetry.output_offsets, shared.symmetry.output_offsets) << what;
  EXPECT_EQ(own.symmetry.output_lengths, shared.symmetry.output_lengths) << what;
  EXPECT_EQ(own.symmetry.rank_layouts, shared.symmetry.rank_layouts) << what;
  EXPECT_EQ(sched::relabel_mismatch(shared, shift, own), "") << what;
  for (size_t i = 0; i < own.steps.size(); ++i) {
    const Step relabelled = sched::relabel_step(shared, shared.steps[i], shift);
    ASSERT_EQ(step_text(own.steps[i]), step_text(relabelled)) << what << ", step " << i;
  }
}

TEST(Symmetry, EveryRankIsTheSharedScheduleRelabelled) {
  int checked = 0;
  for (const SymmetryCase& c : cases()) {
    for (const int size : {1, 2, 3, 4, 5, 7, 8, 12, 16, 23, 32, 37}) {
      if (c.even_sizes_only && size % 2 != 0) continue;
      const Schedule shared = c.build(0, size);
      const bool declared = shared.symmetry.declared();
      // Every case here has no empty block, so from 2 ranks on each declares it.
      if (size >= 2) {
        EXPECT_TRUE(declared) << c.name << ", " << size << " ranks";
      }
      // The other classes' schedules (period > 1) stand for theirs.
      std::vector<Schedule> classes;
      const int period = declared ? shared.symmetry.period : 1;
      for (int first = 0; first < period; ++first)
        classes.push_back(first == 0 ? shared : c.build(first, size));
      for (int rank = 0; rank < size; ++rank) {
        const std::string what =
            c.name + ", rank " + std::to_string(rank) + " of " + std::to_string(size);
        const Schedule own = c.build(rank, size);
        ASSERT_EQ(own.symmetry.declared(), declared) << what;
        if (!declared) continue;
        EXPECT_EQ(own.symmetry.built_for, rank) << what;
        EXPECT_EQ(own.symmetry.period, period) << what;
        const Schedule& mine = classes[static_cast<size_t>(rank % period)];
        const int shift = mine.symmetry.shift_of(rank);
        ASSERT_GE(shift, 0) << what;
        expect_relabelled_equal(mine, shift, own, what);
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 1900);
}

// alltoallv pairwise as grove sim runs it: rank i sends rank j base +
// (i + 2j) mod 3 bytes, so ranks i and i + 3 have equal layouts, and with
// base 0 every third block is empty (skipped). Its schedule declares
// rank_layouts: it stands for a rank whose layouts equal its own and whose
// empty blocks lie `shift` blocks further.
Schedule alltoallv_pairwise(int rank, int size, size_t base, uint32_t posts) {
  AlltoallvArgs a;
  a.rank = rank;
  a.size = size;
  for (int j = 0; j < size; ++j) {
    a.send_counts.push_back(base + static_cast<size_t>((rank + 2 * j) % 3));
    a.recv_counts.push_back(base + static_cast<size_t>((j + 2 * rank) % 3));
  }
  a.posts = posts;
  a.algorithm = parse_algorithm("alltoallv", "pairwise");
  return build_alltoallv(a);
}

bool empty_blocks_moved(const std::vector<size_t>& from, const std::vector<size_t>& to, int shift) {
  const size_t n = from.size();
  for (size_t j = 0; j < n; ++j)
    if ((from[j] == 0) != (to[(j + static_cast<size_t>(shift)) % n] == 0)) return false;
  return true;
}

TEST(Symmetry, AlltoallvPairwiseIsRelabelledWhereLayoutsAndEmptyBlocksAgree) {
  int covered = 0, elsewhere = 0;
  for (const size_t base : {size_t{0}, size_t{1}, size_t{7}}) {
    for (const uint32_t posts : {0u, 3u}) {
      for (const int size : {1, 2, 3, 4, 5, 7, 8, 12, 16, 23, 32, 37}) {
        std::vector<Schedule> own;
        for (int rank = 0; rank < size; ++rank)
          own.push_back(alltoallv_pairwise(rank, size, base, posts));
        for (int rank = 0; rank < size; ++rank) {
          const Schedule& mine = own[static_cast<size_t>(rank)];
          const std::string what = "base " + std::to_string(base) + ", posts " +
                                   std::to_string(posts) + ", rank " + std::to_string(rank) +
                                   " of " + std::to_string(size);
          ASSERT_TRUE(mine.symmetry.declared()) << what;
          EXPECT_TRUE(mine.symmetry.rank_layouts) << what;
          EXPECT_EQ(mine.symmetry.built_for, rank) << what;
          // The first rank with the same layouts stands for this one when
          // its empty blocks, moved, are this rank's.
          for (int first = 0; first < rank; ++first) {
            const Schedule& shared = own[static_cast<size_t>(first)];
            if (shared.symmetry.lengths != mine.symmetry.lengths ||
                shared.symmetry.output_lengths != mine.symmetry.output_lengths)
              continue;
            const int shift = shared.symmetry.shift_of(rank);
            ASSERT_EQ(shift, rank - first) << what;
            if (empty_blocks_moved(shared.symmetry.lengths, mine.symmetry.lengths, shift) &&
                empty_blocks_moved(shared.symmetry.output_lengths, mine.symmetry.output_lengths,
                                   shift)) {
              expect_relabelled_equal(shared, shift, mine, what);
              ++covered;
            } else {
              // Elsewhere: then the steps do differ, and the rank keeps its own.
              EXPECT_NE(sched::relabel_mismatch(shared, shift, mine), "") << what;
              ++elsewhere;
            }
            break;
          }
        }
      }
    }
  }
  // Layouts depend on the rank mod 3, so from rank 3 on every rank has an
  // earlier one with equal layouts: 117 ranks over the sizes, per base and
  // posts. Without empty blocks (base 1, 7) each is covered: 4 x 117. With
  // base 0 only at 12 ranks (a multiple of 3, so a shift by 3 keeps every
  // third block in place): 2 x 9; the other 2 x 108 fall elsewhere.
  EXPECT_EQ(covered, 4 * 117 + 2 * 9);
  EXPECT_EQ(elsewhere, 2 * 108);
}

// A rank whose own block is not as long in its input as in its output
// (its builder refuses it) is refused by the executor's check of a shared
// schedule too: the summary holds that block for a check per rank.
TEST(Symmetry, AnOwnBlockOfTwoLengthsIsRefused) {
  Schedule shared = alltoallv_pairwise(0, 3, 4, 0);
  ASSERT_TRUE(shared.symmetry.rank_layouts);
  // Its input layout is 4, 6, 5 bytes; with this output layout rank 1's own
  // block (block 1, shift 1) is 6 bytes in and 5 out, rank 2's 5 and 5.
  ASSERT_EQ(shared.symmetry.lengths, (std::vector<size_t>{4, 6, 5}));
  shared.symmetry.output_lengths = {4, 5, 5};
  shared.symmetry.output_offsets = {0, 4, 9};
  auto schedule = std::make_shared<const Schedule>(shared);
  MemoryWorld world(3);
  const Tag tag = tag::make(1, 1, tag::Topology::none, 0, 0);
  std::vector<std::byte> in(64), out(64);
  const sched::Buffers buffers{in.data(), in.size(), out.data(), out.size()};
  EXPECT_NO_THROW(sched::Execution(world.transport(2), schedule, buffers, tag));
  try {
    sched::Execution e(world.transport(1), schedule, buffers, tag);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("source is 6 bytes but destination is 5"),
              std::string::npos)
        << e.what();
  }
}

// bcast scatter_allgather keeps a step for an empty block (the executor
// posts nothing for it), so a rank's schedule depends on its place in the
// binomial tree only (bcast_shape): every rank is the schedule of the first
// rank of its shape relabelled, with and without empty blocks, for several
// roots.
TEST(Symmetry, BcastScatterAllgatherIsRelabelledWithinAShape) {
  int covered = 0;
  size_t most_shapes = 0;
  for (const int size : {2, 3, 4, 5, 7, 8, 12, 16, 23, 32, 37}) {
    const auto n = static_cast<size_t>(size);
    // Blocks of one byte with half of them empty, uneven blocks, a last
    // block shorter than the others, and one block only.
    for (const size_t bytes : {n / 2 + 1, 3 * n + 1, 10 * n - 3, size_t{1}}) {
      for (const int root : {0, size / 2, size - 1}) {
        std::vector<Schedule> own;
        std::vector<uint64_t> shapes;
        for (int rank = 0; rank < size; ++rank) {
          const BcastArgs a{rank, size, root, bytes, parse_algorithm("bcast", "scatter_allgather")};
          own.push_back(build_bcast(a));
          shapes.push_back(bcast_shape(a));
        }
        std::vector<uint64_t> distinct;
        for (int rank = 0; rank < size; ++rank) {
          const Schedule& mine = own[static_cast<size_t>(rank)];
          const std::string what = std::to_string(bytes) + " bytes, root " + std::to_string(root) +
                                   ", rank " + std::to_string(rank) + " of " + std::to_string(size);
          ASSERT_TRUE(mine.symmetry.declared()) << what;
          ASSERT_NE(mine.symmetry.shape, 0u) << what;
          EXPECT_EQ(mine.symmetry.shape, shapes[static_cast<size_t>(rank)]) << what;
          const auto first = std::find(shapes.begin(), shapes.end(), mine.symmetry.shape);
          const int first_rank = static_cast<int>(first - shapes.begin());
          if (first_rank == rank) {
            distinct.push_back(mine.symmetry.shape);
            continue;
          }
          const Schedule& shared = own[static_cast<size_t>(first_rank)];
          const int shift = shared.symmetry.shift_of(rank);
          ASSERT_EQ(shift, (rank - first_rank + size) % size) << what;
          expect_relabelled_equal(shared, shift, mine, what);
          ++covered;
        }
        most_shapes = std::max(most_shapes, distinct.size());
      }
    }
  }
  // Shapes grow as log2 of the size: at most 13 at 37 ranks.
  EXPECT_EQ(most_shapes, 13u);
  EXPECT_GT(covered, 800);
}

TEST(Symmetry, RingsWithEmptyBlocksDeclareNone) {
  // Empty chunks are skipped, and which ones depends on the rank.
  AllreduceArgs a;
  a.size = 8;
  a.count = 5;
  a.algorithm = parse_algorithm("allreduce", "ring");
  EXPECT_FALSE(build_allreduce(a).symmetry.declared());
  AllgathervArgs v;
  v.size = 4;
  v.counts = {1, 0, 2, 1};
  v.algorithm = parse_algorithm("allgatherv", "ring");
  EXPECT_FALSE(build_allgatherv(v).symmetry.declared());
  a.count = 8;
  EXPECT_TRUE(build_allreduce(a).symmetry.declared());
}

TEST(Symmetry, ShiftOfCoversTheClassOnly) {
  sched::Symmetry sym;
  sym.built_for = 3;
  sym.size = 8;
  sym.period = 2;
  EXPECT_EQ(sym.shift_of(3), 0);
  EXPECT_EQ(sym.shift_of(5), 2);
  EXPECT_EQ(sym.shift_of(1), 6);
  EXPECT_EQ(sym.shift_of(4), -1);
  EXPECT_EQ(sym.shift_of(8), -1);
  EXPECT_EQ(sched::Symmetry{}.shift_of(0), -1);
}

TEST(Symmetry, ABlockOutsideTheLayoutIsAnError) {
  Schedule s;
  s.algorithm = "broken";
  s.symmetry.built_for = 0;
  s.symmetry.size = 2;
  s.symmetry.period = 1;
  s.symmetry.offsets = {0, 4};
  s.symmetry.lengths = {4, 4};
  Step step;
  step.kind = sched::Kind::send;
  step.peer = 1;
  step.src = Region{sched::Buffer::input, 0, 4};
  step.src.mark = sched::Mark::block;
  step.src.block = 2;
  try {
    (void)sched::relabel_step(s, step, 1);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("block 2 of a 2-block layout"), std::string::npos)
        << e.what();
  }
}

TEST(Symmetry, PartOfAMarkedRegionIsRefused) {
  const BlockLayout layout = BlockLayout::uniform(4, 8);
  const Region block = block_region(sched::Buffer::output, layout, 2);
  EXPECT_EQ(block.offset, 16u);
  EXPECT_EQ(block.length, 8u);
  EXPECT_THROW((void)sub_region(block, 0, 4), Error);
  const Region sized = sized_like(scratch_region(100, 0), block);
  EXPECT_EQ(sized.offset, 100u);
  EXPECT_EQ(sized.length, 8u);
  EXPECT_EQ(sized.mark, sched::Mark::length);
}

// Every rank runs the schedule built for rank 0 (the executor relabels it):
// the results are every rank's own, byte for byte.
TEST(Symmetry, OneScheduleRunsRelabelledOnEveryRank) {
  for (const int size : {2, 5, 8}) {
    const size_t count = 3 * static_cast<size_t>(size) + 2;  // uneven chunks
    AllreduceArgs a;
    a.size = size;
    a.count = count;
    a.algorithm = parse_algorithm("allreduce", "ring");
    const Schedule shared = build_allreduce(a);
    ASSERT_TRUE(shared.symmetry.declared());
    std::vector<testing::RankIo> io(static_cast<size_t>(size));
    std::vector<std::byte> want(count);
    for (int r = 0; r < size; ++r) {
      io[static_cast<size_t>(r)].input = testing::pattern_bytes(r, count);
      io[static_cast<size_t>(r)].output.assign(count, std::byte{0});
      for (size_t i = 0; i < count; ++i)
        want[i] =
            static_cast<std::byte>(static_cast<unsigned>(want[i]) +
                                   static_cast<unsigned>(io[static_cast<size_t>(r)].input[i]));
    }
    const std::vector<Schedule> schedules(static_cast<size_t>(size), shared);
    const std::string error =
        testing::run_schedules(schedules, io, testing::world_options(static_cast<uint64_t>(size)));
    ASSERT_EQ(error, "") << size << " ranks";
    for (int r = 0; r < size; ++r)
      EXPECT_EQ(testing::first_difference(io[static_cast<size_t>(r)].output, want), -1)
          << "rank " << r << " of " << size;
  }
}

TEST(Symmetry, ARankOutsideTheClassIsRefused) {
  Schedule s;
  s.algorithm = "period two";
  s.symmetry.built_for = 0;
  s.symmetry.size = 4;
  s.symmetry.period = 2;
  s.symmetry.offsets = {0, 1, 2, 3};
  s.symmetry.lengths = {1, 1, 1, 1};
  auto shared = std::make_shared<const Schedule>(s);
  MemoryWorld world(4);
  const Tag tag = tag::make(1, 1, tag::Topology::none, 0, 0);
  EXPECT_NO_THROW(sched::Execution(world.transport(2), shared, sched::Buffers{}, tag));
  try {
    sched::Execution e(world.transport(1), shared, sched::Buffers{}, tag);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("built for rank 0 of 4"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace grove::coll
