#pragma once
// The executor's ready steps of one kind, lowest id first, so it posts
// ready steps in step order (src/sched/executor.cpp). Also used by the
// simulator's estimate (src/model/sim_estimate.cpp) to count the storage
// an execution's ready steps take.
//
// Three forms, in the order a queue tries them:
//
// - A run: ids next, next + stride, next + 2 stride, ... (a count of them),
//   held in the queue itself. Steps mostly become ready in increasing id
//   order, one or two at a time (a completion readies its dependents, which
//   are taken at once), or many at once with a constant stride: a pairwise
//   alltoall makes all of its N - 1 sends ready at start, every second step,
//   and so do a ring allgather's receives. Those take no storage and reading
//   the next reads no other cache line (the simulator runs thousands of
//   executions in turn: a separate array is one more line to load per
//   completion, and at 10,000 ranks its ids were most of the run's memory).
// - A sorted array, taken from the front: a step that does not continue
//   the run, but is above the last, turns the run into an array (in the
//   spill storage passed in) and is appended.
// - A binary heap: a step lower than the last turns the array into a heap
//   until it is empty.
//
// An empty queue is an empty run again.

#include <cstdint>
#include <memory>

#include "sched/schedule.hpp"

namespace grove::sched {

// Storage for a ReadySteps array: it grows to the most steps ever held at
// once in array form and is kept (pooled executor states reuse it), so a
// repeated call does not allocate. Kept apart from the queue, which lives in
// the executor state's hot cache lines.
struct ReadySpill {
  std::unique_ptr<StepId[]> ids;
  uint32_t capacity = 0;
};

class ReadySteps {
 public:
  ReadySteps() = default;
  ReadySteps(const ReadySteps&) = delete;
  ReadySteps& operator=(const ReadySteps&) = delete;

  bool empty() const { return ids_ == nullptr ? run_.count == 0 : array_.head == array_.end; }
  void clear() {
    ids_ = nullptr;
    run_ = Run{};
    sorted_ = true;
  }
  // The lowest ready id; the queue must not be empty.
  StepId top() const { return ids_ == nullptr ? run_.next : ids_[array_.head]; }
  // `spill` must be the same storage for every push until clear().
  void push(StepId id, ReadySpill& spill) {
    if (ids_ == nullptr) {
      Run& r = run_;
      if (r.count == 0) {
        r.next = id;
        r.count = 1;
        return;
      }
      if (r.count == 1) {
        if (id > r.next) {
          r.stride = id - r.next;
          r.count = 2;
          return;
        }
      } else if (static_cast<uint64_t>(r.next) + static_cast<uint64_t>(r.count) * r.stride == id) {
        ++r.count;
        return;
      }
      to_array(spill);
    }
    push_array(id, spill);
  }
  // Takes out top().
  void pop() {
    if (ids_ == nullptr) {
      run_.next += run_.stride;
      --run_.count;
      return;
    }
    if (sorted_)
      ++array_.head;
    else
      heap_pop();
    if (array_.head == array_.end) clear();
  }
  // Ids the array form holds (0 for a run), for tests.
  uint32_t stored() const { return ids_ == nullptr ? 0 : array_.end - array_.head; }

 private:
  struct Run {
    StepId next = 0;
    StepId stride = 0;
    uint32_t count = 0;
  };
  struct Array {
    uint32_t head, end, capacity;
  };

  // Writes the run into the spill storage, as a sorted array.
  [[gnu::noinline]] void to_array(ReadySpill& spill);
  void push_array(StepId id, ReadySpill& spill) {
    if (!sorted_) {
      heap_push(id, spill);
      return;
    }
    if (array_.head >= 64 && array_.head * 2 >= array_.end) {
      // Mostly taken: drop the taken part, so the storage follows what is
      // ready, not what ever was.
      drop_taken();
    }
    if (ids_[array_.end - 1] < id) {
      append(id, spill);
      return;
    }
    drop_taken();
    sorted_ = false;  // a sorted array is a heap already
    heap_push(id, spill);
  }
  void append(StepId id, ReadySpill& spill) {
    if (array_.end == array_.capacity) [[unlikely]]
      grow(spill, array_.capacity * 2);
    ids_[array_.end++] = id;
  }
  // Moves the ids to spill storage of at least `wanted` ids.
  [[gnu::noinline]] void grow(ReadySpill& spill, uint32_t wanted);
  void drop_taken();
  void heap_push(StepId id, ReadySpill& spill);
  void heap_pop();

  // ids_ null: the run. Else the array: sorted, ids_[head, end) ascending,
  // the rest taken; or a binary min-heap in ids_[0, end) (head 0). ids_ is
  // the spill's storage, of capacity ids.
  StepId* ids_ = nullptr;
  union {
    Run run_{};
    Array array_;
  };
  bool sorted_ = true;
};
// Two of them and four counts fill one cache line of the executor's state.
static_assert(sizeof(ReadySteps) == 24, "a third of the executor's hot lines");

}  // namespace grove::sched
