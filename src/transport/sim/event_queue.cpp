#include "transport/sim/event_queue.hpp"

#include <algorithm>

namespace grove::sim {

void EventQueue::Lane::grow() {
  // Unrolls the ring so the oldest event is first.
  const uint32_t bigger = capacity == 0 ? 16 : capacity * 2;
  auto fresh = std::make_unique<Event[]>(bigger);
  for (uint32_t i = 0; i < count; ++i)
    fresh[i] = ring[(head + i) & (capacity - 1)];
  ring = std::move(fresh);
  capacity = bigger;
  head = 0;
}

// A 4-ary min-heap: half the levels of a binary one.
void EventQueue::heap_push(const Event& e) {
  const bool was_empty = heap_.empty();
  size_t i = heap_.size();
  heap_.push_back(e);
  while (i > 0) {
    const size_t parent = (i - 1) / 4;
    if (!earlier(e, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
  if (was_empty) {
    enter(kHeap);
    return;
  }
  if (i != 0) return;
  // A new earliest event in the heap: move the heap up to its place.
  int at = 0;
  while (order_[at] != kHeap)
    ++at;
  while (at > 0 && earlier(e, front(order_[at - 1]))) {
    order_[at] = order_[at - 1];
    --at;
  }
  order_[at] = kHeap;
}

Event EventQueue::heap_pop() {
  const Event top = heap_.front();
  const Event last = heap_.back();
  heap_.pop_back();
  const size_t n = heap_.size();
  if (n == 0) {
    leave_first();
    return top;
  }
  size_t i = 0;
  for (;;) {
    const size_t first = 4 * i + 1;
    if (first >= n) break;
    size_t best = first;
    const size_t end = std::min(first + 4, n);
    for (size_t c = first + 1; c < end; ++c)
      if (earlier(heap_[c], heap_[best])) best = c;
    if (!earlier(heap_[best], last)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = last;
  sink_first();
  return top;
}

}  // namespace grove::sim
