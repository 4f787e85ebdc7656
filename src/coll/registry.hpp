#pragma once
// A collective's algorithms, declared once in the collective's own file as a
// table of entries. An entry is everything grove knows about one algorithm:
// its name and arguments, a one-line doc, its closed-form cost (in
// AlgorithmInfo) and its builder. From the table derive the
// `<collective>_algorithm` parameter (its doc lists the algorithms),
// `grove params`, parsing and validation of algorithm names, `grove bench
// --algo all`, the tests' algorithm lists, the simulator's jobs, the cost
// models and the README's algorithm table (`grove select --algorithms`).
// Adding an algorithm is its builder plus one entry.

#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "coll/algorithm.hpp"
#include "coll/collective.hpp"
#include "coll/plan.hpp"
#include "grove/error.hpp"

namespace grove::coll {

template <class Args>
struct AlgorithmEntry {
  AlgorithmInfo info;
  // Adds this rank's steps for `args` to `plan` (spec resolved: not auto,
  // segment and posts filled in). Null for an algorithm without a schedule.
  void (*build)(Plan& plan, const Args& args, const AlgorithmSpec& spec) = nullptr;
};

// Declares `collective`'s algorithms in the catalog (algorithm.hpp) and its
// `<collective>_algorithm` parameter.
void declare_collective(Collective collective, std::vector<AlgorithmInfo> algorithms);

// The value of `<collective>_algorithm` ("auto" unless forced).
const std::string& forced_algorithm_text(Collective collective);

template <class Args>
class AlgorithmTable {
 public:
  AlgorithmTable(Collective collective, std::vector<AlgorithmEntry<Args>> entries)
      : collective_(collective), entries_(std::move(entries)) {
    std::vector<AlgorithmInfo> infos;
    infos.reserve(entries_.size());
    for (const AlgorithmEntry<Args>& e : entries_)
      infos.push_back(e.info);
    declare_collective(collective, std::move(infos));
  }

  // Adds the steps of `spec` to `plan`.
  void build(Plan& plan, const Args& args, const AlgorithmSpec& spec) const {
    for (const AlgorithmEntry<Args>& e : entries_) {
      if (e.info.name != spec.name) continue;
      if (e.build == nullptr) {
        throw Error(Errc::invalid_argument,
                    fmt::format("{}: algorithm '{}' runs without a schedule (blocking calls "
                                "only)",
                                collective_name(collective_), spec.name));
      }
      e.build(plan, args, spec);
      return;
    }
    throw Error(Errc::internal, fmt::format("{}: no builder for algorithm '{}'",
                                            collective_name(collective_), spec.name));
  }

 private:
  Collective collective_;
  std::vector<AlgorithmEntry<Args>> entries_;
};

}  // namespace grove::coll
