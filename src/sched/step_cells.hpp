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
// What every access reads comes first (32 bytes the executor keeps in a
// hot cache line of its state): the chunk table, the shift and the mask,
// and the current chunk (the one a step finished in last) with its cells
// and its count of steps not done, so finishing a step and readying its
// dependents in that chunk touch the cells' line and no table entry (the
// simulator runs thousands of executions in turn: each table line would
// be loaded afresh). A chunk's cell pointer and count share a table entry.
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

  // A chunk of cells: null until one of its steps is touched and again once
  // all are done (`left` 0).
  struct Chunk {
    uint8_t* cells = nullptr;
    uint32_t left = 0;  // steps not done
  };

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
    if (c == kBig) [[unlikely]]
      return satisfy_big(id, c);
    if (--c != 0) return false;
    c = kReady;
    return true;
  }
  // satisfy_one for each of [first, last), calling on_ready(id) for each
  // that becomes ready, in order. The table, shift and mask are read once
  // (a cell write may alias anything, so a loop of satisfy_one reloads
  // them); on_ready must not reset the cells.
  template <class OnReady>
  void satisfy_each(const StepId* first, const StepId* last, OnReady&& on_ready) {
    Chunk* const table = table_;
    const uint32_t shift = shift_, mask = mask_;
    const uint32_t current = current_;
    uint8_t* const current_cells = current_cells_;
    for (; first != last; ++first) {
      const StepId id = *first;
      uint8_t* cells = current_cells;
      if ((id >> shift) != current) {
        cells = table[id >> shift].cells;
        if (cells == nullptr) [[unlikely]]
          cells = open(id >> shift);
      }
      uint8_t& c = cells[id & mask];
      if (c == kBig) [[unlikely]] {
        satisfy_big(id, c);
        continue;
      }
      if (--c != 0) continue;
      c = kReady;
      on_ready(id);
    }
  }
  // Marks `id` done; frees its chunk once every step in it is done.
  void finish(StepId id) {
    if ((id >> shift_) != current_) [[unlikely]]
      make_current(id >> shift_);
    current_cells_[id & mask_] = kDone;
    if (--current_left_ == 0) release_current();
  }
  // The state of `id` without touching it (kDone for a freed chunk, the
  // initial dependency count, capped at kBig, for an untouched one).
  uint8_t peek(StepId id) const;

  size_t chunks_in_use() const { return in_use_; }
  // Cells per chunk for a schedule of `steps` steps.
  static size_t chunk_cells_for(size_t steps);

 private:
  static constexpr uint32_t kNoChunk = UINT32_MAX;

  uint8_t& cell(StepId id) {
    if ((id >> shift_) == current_) return current_cells_[id & mask_];
    uint8_t* cells = table_[id >> shift_].cells;
    if (cells == nullptr) [[unlikely]]
      cells = open(id >> shift_);
    return cells[id & mask_];
  }
  [[gnu::noinline]] uint8_t* open(size_t chunk);
  // Makes `chunk` current (opened if untouched), the old one's count
  // written back to its entry.
  [[gnu::noinline]] void make_current(uint32_t chunk);
  // Every step of the current chunk is done: its cells go back to the spares.
  [[gnu::noinline]] void release_current();
  [[gnu::noinline]] bool satisfy_big(StepId id, uint8_t& c);
  size_t steps_in(size_t chunk) const {
    const size_t first = chunk << shift_;
    return chunk_cells_ < steps_ - first ? chunk_cells_ : steps_ - first;
  }
  // Every step of `chunk` done: its cells are gone (cells null again).
  bool released(size_t chunk) const {
    return chunk == current_ ? current_left_ == 0 : table_[chunk].left == 0;
  }
  void free_all();

  // Read by every access: keep first (see the header comment).
  Chunk* table_ = nullptr;  // chunks_.data()
  uint32_t shift_ = 0;      // log2 of cells per chunk
  uint32_t mask_ = 0;
  // The current chunk (kNoChunk: none) and its cells, and its count of
  // steps not done, which its table entry does not hold meanwhile.
  uint8_t* current_cells_ = nullptr;
  uint32_t current_ = kNoChunk;
  uint32_t current_left_ = 0;

  std::vector<Chunk> chunks_;
  const StepGraph* graph_ = nullptr;
  size_t steps_ = 0;        // graph_->size()
  size_t chunk_cells_ = 0;  // cells per chunk for this graph
  size_t spare_cells_ = 0;  // size of the chunks in spares_
  std::vector<uint8_t*> spares_;
  size_t in_use_ = 0;
  std::vector<std::pair<StepId, uint32_t>> big_;  // counts above kMaxCount
};

}  // namespace grove::sched
