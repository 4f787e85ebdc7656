#include "coll/barrier.hpp"

#include <vector>

#include <fmt/format.h>

#include "grove/error.hpp"
#include "topo/tree.hpp"

namespace grove::coll {

namespace {

using sched::Builder;
using sched::Region;
using sched::StepId;

[[maybe_unused]] const bool registered = [] {
  register_algorithms(
      "barrier",
      {
          {"dissemination", 0, 2, 1 << 20, false,
           "round r: send to rank+2^r, receive from rank-2^r", ""},
          {"knomial", 4, 2, 1 << 20, false, "fan-in then fan-out on a k-nomial tree (knomial:K)",
           "knomial:4"},
          {"flat", 0, 2, 1 << 20, false, "every rank to rank 0, then rank 0 to every rank", ""},
      });
  return true;
}();

// Every barrier message is empty.
constexpr Region kNothing{sched::Buffer::output, 0, 0};

// Channels: fan-in (and dissemination round r uses channel r).
constexpr uint8_t kFanIn = 0;
constexpr uint8_t kFanOut = 1;

StepId message(Builder& b, sched::Kind kind, int peer, uint8_t channel,
               const std::vector<StepId>& after) {
  sched::Step step;
  step.kind = kind;
  step.peer = peer;
  step.channel = channel;
  return b.add(step, after);
}

// Round r's send waits for the receives of every earlier round (not just
// round r-1's: receives are posted up front and may complete out of order).
// By induction, after round r a rank has heard (transitively) from the
// 2^(r+1) - 1 ranks before it.
// Rounds use distinct channels (at most 31), so a peer met in two rounds
// (small sizes) is never confused.
void build_dissemination(Builder& b, int rank, int size) {
  std::vector<StepId> after;
  uint8_t round = 0;
  for (int64_t distance = 1; distance < size; distance *= 2, ++round) {
    message(b, sched::Kind::send, static_cast<int>((rank + distance) % size), round, after);
    const int from = static_cast<int>((rank - distance % size + size) % size);
    after.push_back(message(b, sched::Kind::recv, from, round, {}));
  }
}

// Fan-in: receive from every child, then tell the parent. Fan-out: wait for
// the parent's release (the root: for every child's arrival), then release
// the children. One message per (pair, channel).
void build_tree_barrier(Builder& b, const topo::Tree& tree, int rank) {
  const std::vector<int> children = topo::children(tree, rank);
  std::vector<StepId> arrived;
  arrived.reserve(children.size());
  for (int child : children)
    arrived.push_back(message(b, sched::Kind::recv, child, kFanIn, {}));
  const int parent = topo::parent(tree, rank);
  std::vector<StepId> release;
  if (parent >= 0) {
    message(b, sched::Kind::send, parent, kFanIn, arrived);
    release = {message(b, sched::Kind::recv, parent, kFanOut, {})};
  } else {
    // A zero-byte copy joins all arrivals, so each release send has one
    // dependency instead of size - 1 (the flat root would otherwise need
    // size^2 dependency entries).
    release = {b.add(sched::Step{sched::Kind::copy, -1, 0, kNothing, kNothing}, arrived)};
  }
  for (int child : children)
    message(b, sched::Kind::send, child, kFanOut, release);
}

}  // namespace

AlgorithmSpec choose_barrier_auto(int) {
  return parse_algorithm("barrier", "dissemination");
}

AlgorithmSpec resolve_barrier(const AlgorithmSpec& spec, int size) {
  return spec.is_auto() ? choose_barrier_auto(size) : spec;
}

sched::Schedule build_barrier(const BarrierArgs& a) {
  if (a.size < 1 || a.rank < 0 || a.rank >= a.size) {
    throw Error(Errc::invalid_argument,
                fmt::format("barrier: rank {} is outside [0, {})", a.rank, a.size));
  }
  if (a.algorithm.collective != "barrier") {
    throw Error(Errc::invalid_argument,
                fmt::format("barrier: algorithm '{}' belongs to collective '{}'",
                            a.algorithm.to_string(), a.algorithm.collective));
  }
  const AlgorithmSpec spec = resolve_barrier(a.algorithm, a.size);
  Builder b;
  b.schedule().algorithm = "barrier " + spec.to_string();
  if (a.size == 1) return b.finish();
  if (spec.name == "dissemination") {
    build_dissemination(b, a.rank, a.size);
  } else if (spec.name == "knomial") {
    build_tree_barrier(b, topo::make_tree(topo::Shape::knomial, a.size, 0, spec.radix), a.rank);
  } else if (spec.name == "flat") {
    build_tree_barrier(b, topo::make_tree(topo::Shape::flat, a.size, 0), a.rank);
  } else {
    throw Error(Errc::internal, fmt::format("barrier: no builder for algorithm '{}'", spec.name));
  }
  return b.finish();
}

}  // namespace grove::coll
