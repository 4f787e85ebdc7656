#include "sched/step_cells.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

#include "grove/error.hpp"

namespace grove::sched {
namespace {

// Chunks small enough that a tree rank's few steps cost tens of bytes, big
// enough that a ring rank's tens of thousands cost few chunk switches.
constexpr size_t kMinChunkCells = 16;
constexpr size_t kMaxChunkCells = 4096;

}  // namespace

StepCells::~StepCells() {
  free_all();
}

void StepCells::free_all() {
  for (Chunk& c : chunks_) {
    delete[] c.cells;
    c.cells = nullptr;
  }
  for (uint8_t* c : spares_)
    delete[] c;
  spares_.clear();
  in_use_ = 0;
}

size_t StepCells::chunk_cells_for(size_t steps) {
  return std::clamp(std::bit_ceil(std::max<size_t>(steps, 1)), kMinChunkCells, kMaxChunkCells);
}

void StepCells::reset(const StepGraph& graph) {
  graph_ = &graph;
  const size_t n = graph.size();
  steps_ = n;
  chunk_cells_ = chunk_cells_for(n);
  shift_ = static_cast<uint32_t>(std::countr_zero(chunk_cells_));
  mask_ = static_cast<uint32_t>(chunk_cells_ - 1);
  for (Chunk& c : chunks_) {
    if (c.cells != nullptr) spares_.push_back(c.cells);
    c.cells = nullptr;
  }
  in_use_ = 0;
  if (spare_cells_ < chunk_cells_) {  // spares too small for this graph
    for (uint8_t* c : spares_)
      delete[] c;
    spares_.clear();
    spare_cells_ = chunk_cells_;
  }
  const size_t count = (n + chunk_cells_ - 1) / chunk_cells_;
  chunks_.assign(count, Chunk{});
  table_ = chunks_.data();
  current_ = kNoChunk;
  current_cells_ = nullptr;
  for (size_t c = 0; c < count; ++c)
    table_[c].left = static_cast<uint32_t>(steps_in(c));
  big_.clear();
}

uint8_t* StepCells::open(size_t chunk) {
  if (released(chunk)) throw Error(Errc::internal, "executor: a finished step was touched again");
  uint8_t* cells;
  if (!spares_.empty()) {
    cells = spares_.back();
    spares_.pop_back();
  } else {
    cells = new uint8_t[spare_cells_];
  }
  const size_t first = chunk << shift_;
  const size_t steps = steps_in(chunk);
  std::memcpy(cells, graph_->initial_cells.data() + first, steps);
  const auto& over = graph_->over_cap;
  for (auto it = std::lower_bound(over.begin(), over.end(), static_cast<StepId>(first));
       it != over.end() && *it < first + steps; ++it)
    big_.emplace_back(*it, graph_->initial[*it]);
  table_[chunk].cells = cells;
  ++in_use_;
  return cells;
}

bool StepCells::satisfy_big(StepId id, uint8_t& c) {
  auto it = std::find_if(big_.begin(), big_.end(), [&](const auto& e) { return e.first == id; });
  if (--it->second <= kMaxCount) {
    c = static_cast<uint8_t>(it->second);  // still > 0: kMaxCount > 0
    *it = big_.back();
    big_.pop_back();
  }
  return false;
}

void StepCells::make_current(uint32_t chunk) {
  if (current_ != kNoChunk) table_[current_].left = current_left_;
  uint8_t* cells = table_[chunk].cells;
  if (cells == nullptr) cells = open(chunk);
  current_ = chunk;
  current_cells_ = cells;
  current_left_ = table_[chunk].left;
}

void StepCells::release_current() {
  spares_.push_back(current_cells_);
  table_[current_].cells = nullptr;
  table_[current_].left = 0;
  current_ = kNoChunk;
  current_cells_ = nullptr;
  --in_use_;
}

uint8_t StepCells::peek(StepId id) const {
  if ((id >> shift_) == current_) return current_cells_[id & mask_];
  const uint8_t* cells = table_[id >> shift_].cells;
  if (cells != nullptr) return cells[id & mask_];
  if (released(id >> shift_)) return kDone;
  const uint32_t count = graph_->initial[id];
  return count <= kMaxCount ? static_cast<uint8_t>(count) : kBig;
}

}  // namespace grove::sched
