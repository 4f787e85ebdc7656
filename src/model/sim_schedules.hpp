#pragma once
// Every rank's schedule for a simulated run, built as few times as the
// algorithm allows: a schedule its builder declares symmetric
// (sched::Symmetry) stands for every rank it covers, and the executor runs
// it relabelled for each (a 10,000-rank ring is one schedule, not 10,000
// of 50,000 steps each). Other algorithms get one schedule per rank, as on
// a real machine.
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

  size_t built() const { return built_; }           // builder calls so far
  size_t shared() const { return shared_.size(); }  // schedules standing for several ranks

 private:
  std::shared_ptr<const sched::Schedule> build(int rank);
  void check_against_own(const sched::Schedule& shared);

  const SimJob& job_;
  std::vector<std::shared_ptr<const sched::Schedule>> shared_;
  size_t built_ = 0;
};

}  // namespace grove::model
