#include "sched/ready_steps.hpp"

#include <algorithm>

namespace grove::sched {

void ReadySteps::to_array(ReadySpill& spill) {
  const Run r = run_;
  // Room for the run and the step that ended it.
  if (spill.capacity <= r.count) {
    const uint32_t size = std::max<uint32_t>(2 * (r.count + 1), 8);
    spill.ids = std::make_unique<StepId[]>(size);
    spill.capacity = size;
  }
  ids_ = spill.ids.get();
  StepId id = r.next;
  for (uint32_t i = 0; i < r.count; ++i, id += r.stride)
    ids_[i] = id;
  array_ = Array{0, r.count, spill.capacity};
  sorted_ = true;
}

void ReadySteps::grow(ReadySpill& spill, uint32_t wanted) {
  const uint32_t size = std::max(wanted, spill.capacity);
  auto fresh = std::make_unique<StepId[]>(size);
  std::copy(ids_, ids_ + array_.end, fresh.get());
  spill.ids = std::move(fresh);
  spill.capacity = size;
  ids_ = spill.ids.get();
  array_.capacity = size;
}

void ReadySteps::drop_taken() {
  std::copy(ids_ + array_.head, ids_ + array_.end, ids_);
  array_.end -= array_.head;
  array_.head = 0;
}

void ReadySteps::heap_push(StepId id, ReadySpill& spill) {
  uint32_t i = array_.end;
  append(id, spill);
  while (i > 0) {
    const uint32_t parent = (i - 1) / 2;
    if (ids_[parent] <= id) break;
    ids_[i] = ids_[parent];
    i = parent;
  }
  ids_[i] = id;
}

void ReadySteps::heap_pop() {
  const StepId last = ids_[--array_.end];
  const uint32_t n = array_.end;
  if (n == 0) return;
  uint32_t i = 0;
  for (;;) {
    uint32_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && ids_[child + 1] < ids_[child]) ++child;
    if (last <= ids_[child]) break;
    ids_[i] = ids_[child];
    i = child;
  }
  ids_[i] = last;
}

}  // namespace grove::sched
