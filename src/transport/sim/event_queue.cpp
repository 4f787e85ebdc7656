#include "transport/sim/event_queue.hpp"

#include <algorithm>
#include <bit>

namespace grove::sim {
namespace {

bool earlier(const Event& a, const Event& b) {
  return a.time != b.time ? a.time < b.time : a.seq < b.seq;
}

}  // namespace

void EventQueue::Lane::append(const Event& e) {
  if (count == ring.size()) {
    // Grow, unrolling the ring so the oldest event is first.
    std::vector<Event> bigger(std::max<size_t>(16, ring.size() * 2));
    for (size_t i = 0; i < count; ++i)
      bigger[i] = ring[(head + i) & (ring.size() - 1)];
    ring.swap(bigger);
    head = 0;
  }
  ring[(head + count) & (ring.size() - 1)] = e;
  ++count;
}

int EventQueue::earliest() const {
  int best = kLanes;
  const Event* best_event = heap_.empty() ? nullptr : &heap_.front();
  for (uint32_t busy = busy_; busy != 0; busy &= busy - 1) {
    const int i = std::countr_zero(busy);
    const Event& front = lanes_[i].front();
    if (best_event == nullptr || earlier(front, *best_event)) {
      best = i;
      best_event = &front;
    }
  }
  return best;
}

const Event& EventQueue::top() const {
  const int i = earliest();
  return i == kLanes ? heap_.front() : lanes_[i].front();
}

void EventQueue::push(const Event& e) {
  ++size_;
  Lane& lane = lanes_[e.kind];
  // seq grows with every push, so not earlier in time means not earlier.
  if (lane.count == 0 || lane.back().time <= e.time) {
    lane.append(e);
    busy_ |= 1u << e.kind;
    return;
  }
  heap_push(e);
}

Event EventQueue::pop() {
  --size_;
  const int i = earliest();
  if (i == kLanes) return heap_pop();
  Lane& lane = lanes_[i];
  const Event e = lane.front();
  lane.head = (lane.head + 1) & (lane.ring.size() - 1);
  if (--lane.count == 0) busy_ &= ~(1u << i);
  return e;
}

// A 4-ary min-heap: half the levels of a binary one.
void EventQueue::heap_push(const Event& e) {
  size_t i = heap_.size();
  heap_.push_back(e);
  while (i > 0) {
    const size_t parent = (i - 1) / 4;
    if (!earlier(e, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

Event EventQueue::heap_pop() {
  const Event top = heap_.front();
  const Event last = heap_.back();
  heap_.pop_back();
  const size_t n = heap_.size();
  if (n == 0) return top;
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
  return top;
}

}  // namespace grove::sim
