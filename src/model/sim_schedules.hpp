#pragma once
// Every rank's schedule for a simulated run, built as few times as the
// algorithm allows: a schedule its builder declares symmetric
// (sched::Symmetry) stands for every rank it covers, and the executor runs
// it relabelled for each (a 10,000-rank ring is one schedule, not 10,000
// of 50,000 steps each). Other algorithms get one schedule per rank, as on
// a real machine.
//
// A schedule whose layouts are its rank's own (Symmetry::rank_layouts:
// alltoallv) stands for the ranks whose layouts (SimJob::layouts) equal
// its own and whose empty blocks fall at the same places relative to the
// rank; the first such schedule made sorts every rank once: one schedule
// per distinct layout, a rank whose empty blocks fall elsewhere keeping its
// own (at most 64 distinct layouts are kept; ranks with others build their
// own).
//
// The builder's declaration is checked here too: the first time a shared
// schedule is made, the own schedules of three other ranks it covers are
// built and compared with it relabelled (tests/unit/coll/symmetry_test.cpp
// checks every rank at small sizes).

#include <cstddef>
#include <memory>
#include <vector>

#include "model/sim_run.hpp"
#include "sched/schedule.hpp"

namespace grove::model {

class SimSchedules {
 public:
  explicit SimSchedules(const SimJob& job) : job_(job) {}

  // The schedule rank `rank` runs: a shared one covering it, else its own.
  // Throws the builder's errors, and grove::Error(internal) when a shared
  // schedule differs from a rank's own.
  std::shared_ptr<const sched::Schedule> of(int rank);

  // How many ranks `schedule` (one of()'s) stands for: 1 for a rank's own.
  size_t ranks_of(const sched::Schedule& schedule) const;

  // The rank each schedule standing for several ranks was built for.
  std::vector<int> representatives() const;

  size_t built() const { return built_; }  // builder calls so far
  size_t shared() const;                   // schedules standing for several ranks

 private:
  std::shared_ptr<const sched::Schedule> build(int rank);
  void check_against_own(const sched::Schedule& shared);
  void check_one(const sched::Schedule& shared, int rank);
  // Sorts every rank by its layouts (see above), from the first schedule
  // with rank_layouts.
  void sort_by_layouts(std::shared_ptr<const sched::Schedule> first);
  // The same by shape (Symmetry::shape, SimJob::shape): one schedule per
  // shape, built for its first rank.
  void sort_by_shape(std::shared_ptr<const sched::Schedule> first);

  static constexpr size_t kMaxLayouts = 64;  // distinct layouts or shapes kept

  const SimJob& job_;
  std::vector<std::shared_ptr<const sched::Schedule>> shared_;
  // With rank_layouts (after sort_by_layouts): the schedules, one per
  // distinct layout, the ranks each stands for, and each rank's (-1: its own).
  std::vector<std::shared_ptr<const sched::Schedule>> by_layout_;
  std::vector<size_t> by_layout_ranks_;
  std::vector<int> layout_of_rank_;
  bool sorted_ = false;
  size_t built_ = 0;
};

}  // namespace grove::model
