#include "model/sim_schedules.hpp"

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "grove/error.hpp"

namespace grove::model {
namespace {

uint64_t hash_of(const RankLayouts& l) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const auto* v : {&l.input_offsets, &l.input_lengths, &l.output_offsets, &l.output_lengths}) {
    h = (h ^ v->size()) * 0x100000001b3ull;
    for (const size_t x : *v)
      h = (h ^ x) * 0x100000001b3ull;
  }
  return h;
}

bool same_layouts(const sched::Symmetry& sym, const RankLayouts& l) {
  return sym.offsets == l.input_offsets && sym.lengths == l.input_lengths &&
         sym.output_offsets == l.output_offsets && sym.output_lengths == l.output_lengths;
}

// The empty blocks of a layout, to check a shift moves them onto empty ones.
std::vector<size_t> empty_blocks(const std::vector<size_t>& lengths) {
  std::vector<size_t> out;
  for (size_t i = 0; i < lengths.size(); ++i)
    if (lengths[i] == 0) out.push_back(i);
  return out;
}

}  // namespace

std::shared_ptr<const sched::Schedule> SimSchedules::build(int rank) {
  ++built_;
  return std::make_shared<const sched::Schedule>(job_.build(rank));
}

std::shared_ptr<const sched::Schedule> SimSchedules::of(int rank) {
  if (sorted_) {
    const int at = layout_of_rank_[static_cast<size_t>(rank)];
    if (at >= 0) return by_layout_[static_cast<size_t>(at)];
    return build(rank);
  }
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
    if (sym.rank_layouts) {
      if (!job_.layouts) return own;  // no way to tell which ranks it stands for
      sort_by_layouts(own);
      return own;
    }
    if (sym.shape != 0) {
      if (!job_.shape) return own;
      sort_by_shape(own);
      return own;
    }
    check_against_own(*own);
    shared_.push_back(own);
  }
  return own;
}

void SimSchedules::sort_by_layouts(std::shared_ptr<const sched::Schedule> first) {
  const auto n = static_cast<size_t>(job_.size);
  layout_of_rank_.assign(n, -1);
  // Per distinct layout: its schedule's empty blocks, and how many of the
  // ranks it stands for were compared with their own schedules.
  struct Kept {
    std::vector<size_t> empty_in, empty_out;
    int checked = 0;
  };
  std::vector<Kept> kept;
  std::unordered_multimap<uint64_t, size_t> by_hash;
  auto keep = [&](std::shared_ptr<const sched::Schedule> s, uint64_t hash) {
    const size_t at = by_layout_.size();
    by_hash.emplace(hash, at);
    kept.push_back({empty_blocks(s->symmetry.lengths), empty_blocks(s->symmetry.output_lengths)});
    layout_of_rank_[static_cast<size_t>(s->symmetry.built_for)] = static_cast<int>(at);
    by_layout_.push_back(std::move(s));
    by_layout_ranks_.push_back(1);
  };
  const int first_rank = first->symmetry.built_for;
  {
    const RankLayouts own = job_.layouts(first_rank);
    if (!same_layouts(first->symmetry, own)) {
      throw Error(Errc::internal, fmt::format("{}: rank {}'s schedule has other layouts than the "
                                              "job gives it",
                                              job_.what, first_rank));
    }
    keep(std::move(first), hash_of(own));
  }
  for (int rank = 0; rank < job_.size; ++rank) {
    if (rank == first_rank) continue;
    const RankLayouts layouts = job_.layouts(rank);
    const uint64_t hash = hash_of(layouts);
    int found = -1;
    for (auto [it, end] = by_hash.equal_range(hash); it != end; ++it)
      if (same_layouts(by_layout_[it->second]->symmetry, layouts))
        found = static_cast<int>(it->second);
    if (found < 0) {
      // A new layout: the rank's own schedule stands for the ranks that share
      // it. With many layouts (every rank's counts its own) sharing saves
      // little: past kMaxLayouts a rank with a new one builds its own when
      // it runs, not here (the estimate, made first, must not hold them all).
      if (by_layout_.size() >= kMaxLayouts) continue;
      auto own = build(rank);
      const sched::Symmetry& sym = own->symmetry;
      if (sym.declared() && sym.rank_layouts && sym.built_for == rank && sym.size == job_.size &&
          same_layouts(sym, layouts))
        keep(std::move(own), hash);
      continue;
    }
    const sched::Schedule& s = *by_layout_[static_cast<size_t>(found)];
    Kept& k = kept[static_cast<size_t>(found)];
    const size_t shift = static_cast<size_t>(s.symmetry.shift_of(rank));
    // Equal layouts: as many empty blocks each way, so mapping each onto an
    // empty one of this rank's is a one-to-one match.
    auto moved_onto_empty = [&](const std::vector<size_t>& empty, const std::vector<size_t>& of) {
      return std::all_of(empty.begin(), empty.end(),
                         [&](size_t block) { return of[(block + shift) % n] == 0; });
    };
    if (!moved_onto_empty(k.empty_in, layouts.input_lengths) ||
        !moved_onto_empty(k.empty_out, layouts.output_lengths))
      continue;  // its empty blocks fall elsewhere: its own schedule
    layout_of_rank_[static_cast<size_t>(rank)] = found;
    ++by_layout_ranks_[static_cast<size_t>(found)];
    if (k.checked < 3) {
      ++k.checked;
      check_one(s, rank);
    }
  }
  sorted_ = true;
}

void SimSchedules::sort_by_shape(std::shared_ptr<const sched::Schedule> first) {
  layout_of_rank_.assign(static_cast<size_t>(job_.size), -1);
  std::unordered_map<uint64_t, size_t> by_shape;
  std::vector<int> checked;
  auto keep = [&](std::shared_ptr<const sched::Schedule> s) {
    const size_t at = by_layout_.size();
    by_shape.emplace(s->symmetry.shape, at);
    layout_of_rank_[static_cast<size_t>(s->symmetry.built_for)] = static_cast<int>(at);
    by_layout_.push_back(std::move(s));
    by_layout_ranks_.push_back(1);
    checked.push_back(0);
  };
  const int first_rank = first->symmetry.built_for;
  if (job_.shape(first_rank) != first->symmetry.shape) {
    throw Error(Errc::internal, fmt::format("{}: rank {}'s schedule has another shape than the "
                                            "job gives it",
                                            job_.what, first_rank));
  }
  keep(std::move(first));
  for (int rank = 0; rank < job_.size; ++rank) {
    if (rank == first_rank) continue;
    const uint64_t shape = job_.shape(rank);
    if (shape == 0) continue;
    const auto it = by_shape.find(shape);
    if (it == by_shape.end()) {
      // A new shape: the rank's own schedule stands for the ranks of it.
      if (by_layout_.size() >= kMaxLayouts) continue;
      auto own = build(rank);
      const sched::Symmetry& sym = own->symmetry;
      if (!sym.declared() || sym.shape != shape || sym.built_for != rank || sym.size != job_.size) {
        throw Error(Errc::internal,
                    fmt::format("{}: rank {}'s schedule does not declare the shape the job gives "
                                "it",
                                job_.what, rank));
      }
      keep(std::move(own));
      continue;
    }
    const size_t at = it->second;
    layout_of_rank_[static_cast<size_t>(rank)] = static_cast<int>(at);
    ++by_layout_ranks_[at];
    if (checked[at] < 3) {
      ++checked[at];
      check_one(*by_layout_[at], rank);
    }
  }
  sorted_ = true;
}

size_t SimSchedules::ranks_of(const sched::Schedule& schedule) const {
  for (size_t i = 0; i < by_layout_.size(); ++i)
    if (by_layout_[i].get() == &schedule) return by_layout_ranks_[i];
  for (const auto& s : shared_)
    if (s.get() == &schedule) return static_cast<size_t>(s->symmetry.size / s->symmetry.period);
  return 1;
}

std::vector<int> SimSchedules::representatives() const {
  std::vector<int> out;
  for (const auto& s : shared_)
    out.push_back(s->symmetry.built_for);
  for (size_t i = 0; i < by_layout_.size(); ++i)
    if (by_layout_ranks_[i] > 1) out.push_back(by_layout_[i]->symmetry.built_for);
  return out;
}

size_t SimSchedules::shared() const {
  return shared_.size() +
         static_cast<size_t>(std::count_if(by_layout_ranks_.begin(), by_layout_ranks_.end(),
                                           [](size_t ranks) { return ranks > 1; }));
}

void SimSchedules::check_one(const sched::Schedule& shared, int rank) {
  const sched::Symmetry& sym = shared.symmetry;
  const auto own = build(rank);
  const std::string why = sched::relabel_mismatch(shared, sym.shift_of(rank), *own);
  if (!why.empty()) {
    throw Error(Errc::internal,
                fmt::format("{}: the schedule of rank {} declares that it stands for rank {}, "
                            "but rank {}'s own schedule differs: {}",
                            job_.what, sym.built_for, rank, rank, why));
  }
}

void SimSchedules::check_against_own(const sched::Schedule& shared) {
  const sched::Symmetry& sym = shared.symmetry;
  const int members = sym.size / sym.period;
  std::vector<int> picked;  // the next member, the middle one and the last
  for (const int k : {1, members / 2, members - 1})
    if (k >= 1 && k < members && std::find(picked.begin(), picked.end(), k) == picked.end())
      picked.push_back(k);
  for (const int k : picked)
    check_one(shared, (sym.built_for + k * sym.period) % sym.size);
}

}  // namespace grove::model
