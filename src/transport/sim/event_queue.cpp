#include "transport/sim/event_queue.hpp"

#include <algorithm>

namespace grove::sim {

void EventQueue::Lane::grow() {
  // Unrolls the ring so the oldest event is first.
  const uint32_t bigger = capacity == 0 ? 16 : capacity * 2;
  auto fresh = std::make_unique<LaneEvent[]>(bigger);
  for (uint32_t i = 0; i < count; ++i)
    fresh[i] = ring[(head + i) & mask];
  ring = std::move(fresh);
  capacity = bigger;
  mask = bigger - 1;
  head = 0;
  tail = count;
}

size_t EventQueue::size() const {
  size_t n = heap_.size();
  for (const Lane& lane : lanes_)
    n += lane.count;
  return n;
}

Event EventQueue::top() const {
  const uint32_t source = fronts_[0].source;
  if (source == kHeap) return heap_.front();
  const Lane& lane = lanes_[source];
  const LaneEvent& e = lane.ring[lane.head];
  return Event{e.time, e.seq, e.id, static_cast<uint8_t>(source % kKinds)};
}

void EventQueue::push_out_of_order(const Event& e) {
  // Best fit: the spare whose last event is the latest not after e's, else
  // an empty spare (an empty lane takes anything), else the heap.
  int best = -1, empty = -1;
  for (int j = 1; j < kLanesPerKind; ++j) {
    const int source = e.kind + kKinds * j;
    const Lane& lane = lanes_[source];
    if (lane.count == 0) {
      if (empty < 0) empty = source;
    } else if (lane.last_time <= e.time && (best < 0 || lane.last_time > lanes_[best].last_time)) {
      best = source;
    }
  }
  if (best < 0) best = empty;
  if (best < 0) {
    heap_push(e);
    return;
  }
  append(lanes_[best], static_cast<uint32_t>(best), e.time, e.seq, e.id);
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
  const Front key{e.time, e.seq, kHeap};
  if (was_empty) {
    enter(key);
    return;
  }
  if (i != 0) return;
  // A new earliest event in the heap: move the heap up to its place.
  int at = 0;
  while (fronts_[at].source != kHeap)
    ++at;
  while (at > 0 && earlier(key, fronts_[at - 1])) {
    fronts_[at] = fronts_[at - 1];
    --at;
  }
  fronts_[at] = key;
}

Taken EventQueue::heap_pop() {
  const Event top = heap_.front();
  const Event last = heap_.back();
  heap_.pop_back();
  const size_t n = heap_.size();
  if (n == 0) {
    leave_first();
    return Taken{top.time, top.id, top.kind};
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
  sink_first(Front{heap_.front().time, heap_.front().seq, kHeap});
  return Taken{top.time, top.id, top.kind};
}

}  // namespace grove::sim
