#include "model/sim_schedules.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "grove/error.hpp"

namespace grove::model {

std::shared_ptr<const sched::Schedule> SimSchedules::build(int rank) {
  ++built_;
  return std::make_shared<const sched::Schedule>(job_.build(rank));
}

std::shared_ptr<const sched::Schedule> SimSchedules::of(int rank) {
  for (const auto& s : shared_)
    if (s->symmetry.shift_of(rank) >= 0) return s;
  auto own = build(rank);
  const sched::Symmetry& sym = own->symmetry;
  if (sym.declared() && sym.size == job_.size && sym.period < sym.size) {
    if (sym.built_for != rank) {
      throw Error(Errc::internal, fmt::format("{}: the schedule of rank {} says it was built for "
                                              "rank {}",
                                              job_.what, rank, sym.built_for));
    }
    check_against_own(*own);
    shared_.push_back(own);
  }
  return own;
}

void SimSchedules::check_against_own(const sched::Schedule& shared) {
  const sched::Symmetry& sym = shared.symmetry;
  const int members = sym.size / sym.period;
  std::vector<int> picked;  // the next member, the middle one and the last
  for (const int k : {1, members / 2, members - 1})
    if (k >= 1 && k < members && std::find(picked.begin(), picked.end(), k) == picked.end())
      picked.push_back(k);
  for (const int k : picked) {
    const int rank = (sym.built_for + k * sym.period) % sym.size;
    const auto own = build(rank);
    const std::string why = sched::relabel_mismatch(shared, sym.shift_of(rank), *own);
    if (!why.empty()) {
      throw Error(Errc::internal,
                  fmt::format("{}: the schedule of rank {} declares that it stands for rank {}, "
                              "but rank {}'s own schedule differs: {}",
                              job_.what, sym.built_for, rank, rank, why));
    }
  }
}

}  // namespace grove::model
