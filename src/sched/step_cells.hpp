#pragma once
// One execution's progress through its steps, one byte per step, kept in
// chunks that exist only while they matter: a chunk is made when one of its
// steps is first touched (a dependency done, made ready) and given back
// once all its steps are done. Untouched steps are implicitly waiting on
// all their dependencies (StepGraph::initial). So an execution holds bytes
// for the steps between its oldest unfinished step and its newest touched
// one, not for its whole schedule: the simulator runs 10,000 ranks of a
// 50,000-step ring schedule in a few hundred megabytes.
//
// A pooled execution state keeps its chunks (as spares) and vectors, so a
// repeated collective call allocates nothing here.

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "sched/schedule.hpp"
#include "sched/step_graph.hpp"

namespace grove::sched {

class StepCells {
 public:
  // A cell: 0 .. kMaxCount waiting on that many dependencies; kBig waiting
  // on more (counted in big_); then ready, in flight, done; ended: a
  // message the transport reported without completing it (failed, or
  // cancelled after the execution failed), never done.
  static constexpr uint8_t kMaxCount = 249;
  static constexpr uint8_t kBig = 250;
  static constexpr uint8_t kReady = 251;
  static constexpr uint8_t kInFlight = 252;
  static constexpr uint8_t kDone = 253;
  static constexpr uint8_t kEnded = 254;
  static_assert(StepGraph::kCapped == kBig, "a graph's initial cells are these cells");

  StepCells() = default;
  ~StepCells();
  StepCells(const StepCells&) = delete;
  StepCells& operator=(const StepCells&) = delete;

  // Every step of `graph` untouched; chunks in use become spares. `graph`
  // must outlive the use.
  void reset(const StepGraph& graph);

  void set(StepId id, uint8_t state) { cell(id) = state; }
  // One dependency of waiting step `id` is done: true when none is left,
  // and the step is then marked ready.
  bool satisfy_one(StepId id) {
    uint8_t& c = cell(id);
    if (c == kBig) return satisfy_big(id, c);
    if (--c != 0) return false;
    c = kReady;
    return true;
  }
  // Marks `id` done; frees its chunk once every step in it is done.
  void finish(StepId id) {
    const size_t chunk = id >> shift_;
    cell(id) = kDone;
    if (--left_[chunk] == 0) release(chunk);
  }
  // The state of `id` without touching it (kDone for a freed chunk, the
  // initial dependency count, capped at kBig, for an untouched one).
  uint8_t peek(StepId id) const;

  size_t chunks_in_use() const { return in_use_; }
  // Cells per chunk for a schedule of `steps` steps.
  static size_t chunk_cells_for(size_t steps);

 private:
  uint8_t& cell(StepId id) {
    uint8_t* chunk = chunks_[id >> shift_];
    if (chunk == nullptr) [[unlikely]]
      chunk = open(id >> shift_);
    return chunk[id & mask_];
  }
  uint8_t* open(size_t chunk);
  void release(size_t chunk);
  bool satisfy_big(StepId id, uint8_t& c);
  size_t steps_in(size_t chunk) const {
    const size_t first = chunk << shift_;
    return chunk_cells_ < steps_ - first ? chunk_cells_ : steps_ - first;
  }
  // Every step of `chunk` done: its cells are gone (chunks_ null again).
  bool released(size_t chunk) const { return left_[chunk] == 0; }
  void free_all();

  const StepGraph* graph_ = nullptr;
  size_t steps_ = 0;    // graph_->size()
  uint32_t shift_ = 0;  // log2 of cells per chunk
  uint32_t mask_ = 0;
  size_t chunk_cells_ = 0;        // cells per chunk for this graph
  size_t spare_cells_ = 0;        // size of the chunks in spares_
  std::vector<uint8_t*> chunks_;  // per chunk: cells, or nullptr (untouched or released)
  std::vector<uint32_t> left_;    // per chunk: steps not done
  std::vector<uint8_t*> spares_;
  size_t in_use_ = 0;
  std::vector<std::pair<StepId, uint32_t>> big_;  // counts above kMaxCount
};

}  // namespace grove::sched
