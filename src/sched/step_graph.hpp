#pragma once
// What the executor derives from a schedule alone, once per schedule and
// shared by every execution of it: the dependency graph in CSR form, the
// dependency counts, the steps ready at the start and, for a symmetric
// schedule, a summary that checks a relabelled copy (Symmetry) against a
// rank's buffers without visiting every step. In the simulator one
// schedule runs on thousands of ranks; this is held once, not per rank.
//
// Also the validation every execution runs before posting anything.

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sched/schedule.hpp"

namespace grove::sched {

struct Buffers;

struct StepGraph {
  // Steps that depend on step i: dependents[dependents_begin[i], dependents_begin[i+1]).
  std::vector<uint32_t> dependents_begin;
  std::vector<StepId> dependents;
  std::vector<uint32_t> initial;  // dependency count of each step
  // The counts as an execution's cells start them (StepCells): capped at
  // kCapped, and the steps above the cap in order, kept apart.
  static constexpr uint32_t kCapped = 250;  // StepCells::kBig
  std::vector<uint8_t> initial_cells;
  std::vector<StepId> over_cap;
  std::vector<StepId> roots;  // steps without dependencies, in order
  size_t sends = 0, recvs = 0, locals = 0;

  // For a symmetric schedule: whether every relabelled copy is valid given
  // buffers at least `extent` long (and non-null where `used`), so a rank's
  // execution need not validate its copy step by step.
  struct RelabelSummary {
    bool uniform = false;  // structure valid and lengths equal where they must be, for every shift
    std::array<size_t, 3> extent{};  // per Buffer: the furthest byte any shift reaches
    std::array<bool, 3> used{};      // per Buffer: some shift reads or writes a byte of it
    // Per Buffer, regions as long as the schedule's own block (Mark::length
    // of block built_for): the furthest offset of one, whose end under a
    // shift is that offset plus the running rank's own block, not the
    // longest block (an allgatherv's input is its rank's block long).
    std::array<size_t, 3> own_offset{};
    std::array<bool, 3> own{};
    // Blocks copied between the input and output layouts (a separate output
    // layout: Symmetry::output_lengths): a shift is valid only where the
    // moved block is as long in both, checked per rank.
    static constexpr size_t kUnequalKept = 8;
    std::vector<uint32_t> unequal_layouts;
  };
  RelabelSummary relabel;

  explicit StepGraph(const Schedule& schedule);
  size_t size() const { return initial.size(); }
};

// The graph of `schedule`, from a small per-thread cache of recently used
// ones (so the simulator's thousands of executions of one schedule share
// one), else built.
std::shared_ptr<const StepGraph> graph_of(const std::shared_ptr<const Schedule>& schedule);

struct ValidationTarget {
  int rank = 0;
  int size = 1;
  const Buffers* buffers = nullptr;
  bool payload = true;  // the transport carries bytes: referenced buffers must exist
};

// Throws grove::Error(invalid_argument) naming the first step of
// `schedule`, relabelled by `shift`, that `target` cannot run: a dependency
// on a later step, a peer out of range, a channel too wide, a region out of
// its buffer or writing the input, copy/reduce lengths that differ, a
// reduction the datatype does not define.
void validate_steps(const Schedule& schedule, int shift, const ValidationTarget& target);

// True when the summary proves every step of the relabelled copy valid for
// `target` (then validate_steps would not throw); false means "check each step".
bool relabel_summary_admits(const StepGraph& graph, const Schedule& schedule,
                            const ValidationTarget& target);

}  // namespace grove::sched
