#pragma once
// The simulator's pending events, earliest (time, seq) first. seq is the
// insertion number, so (time, seq) is a total order and the order events
// leave is fixed whatever the queue's shape: determinism does not depend on
// how this is built.
//
// Most events of one kind are scheduled in time order (a head arrival is
// always `latency` after its departure, which happens in time order), so
// each kind has a lane: a FIFO that takes an event no earlier than its
// last one. Only events that would break a lane's order go to a 4-ary heap.
// The lanes holding events and the heap (the sources) are kept ordered by
// their earliest event, so taking the earliest reads the first source and
// compares its next event with the second's: events of one kind come in
// runs (ranks in step post at equal times), and the source mostly stays
// first. Push and pop are inline: the engine does four of each per message.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "transport/sim/sim_time.hpp"

namespace grove::sim {

struct Event {
  Time time;
  uint64_t seq;
  uint32_t id;
  uint8_t kind;
};

// What the engine needs of an event it takes: small enough for registers.
struct Taken {
  Time time;
  uint32_t id;
  uint8_t kind;
};

class EventQueue {
 public:
  static constexpr int kLanes = 8;  // one per event kind (kind < kLanes)

  bool empty() const { return sources_ == 0; }
  size_t size() const { return size_; }
  // The earliest pending event; the queue must not be empty.
  const Event& top() const { return front(order_[0]); }
  void push(const Event& e) { push(e.time, e.seq, e.id, e.kind); }
  void push(Time time, uint64_t seq, uint32_t id, uint8_t kind) {
    ++size_;
    Lane& lane = lanes_[kind];
    const bool was_empty = lane.count == 0;
    // seq grows with every push, so not earlier in time means not earlier.
    if (!was_empty && time < lane.last_time) {
      heap_push(Event{time, seq, id, kind});
      return;
    }
    if (lane.count == lane.capacity) lane.grow();
    Event& slot = lane.ring[(lane.head + lane.count) & (lane.capacity - 1)];
    slot.time = time;
    slot.seq = seq;
    slot.id = id;
    slot.kind = kind;
    ++lane.count;
    lane.last_time = time;
    if (was_empty) enter(kind);
  }
  // The earliest pending event, taken out; the queue must not be empty.
  Taken pop() {
    --size_;
    const int source = order_[0];
    if (source == kHeap) {
      const Event e = heap_pop();
      return Taken{e.time, e.id, e.kind};
    }
    Lane& lane = lanes_[source];
    const Event& e = lane.ring[lane.head];
    const Taken taken{e.time, e.id, e.kind};
    lane.head = (lane.head + 1) & (lane.capacity - 1);
    if (--lane.count == 0)
      leave_first();
    else
      sink_first();
    return taken;
  }

 private:
  static constexpr int kHeap = kLanes;  // the heap's source number

  struct Lane {
    std::unique_ptr<Event[]> ring;  // `capacity` long, a power of two (or 0)
    uint32_t capacity = 0;
    uint32_t head = 0;
    uint32_t count = 0;
    Time last_time = 0;  // of the newest event, when count > 0
    void grow();
  };

  static bool earlier(const Event& a, const Event& b) {
    return a.time < b.time || (a.time == b.time && a.seq < b.seq);
  }
  // The earliest event of a source holding events.
  const Event& front(int source) const {
    if (source == kHeap) return heap_.front();
    const Lane& lane = lanes_[source];
    return lane.ring[lane.head];
  }
  // The first source's earliest event got later: move it down to its place.
  void sink_first() {
    int i = 0;
    const uint8_t moving = order_[0];
    const Event& key = front(moving);
    while (i + 1 < sources_ && earlier(front(order_[i + 1]), key)) {
      order_[i] = order_[i + 1];
      ++i;
    }
    order_[i] = moving;
  }
  // The first source is empty: drop it.
  void leave_first() {
    --sources_;
    for (int i = 0; i < sources_; ++i)
      order_[i] = order_[i + 1];
  }
  // A source that was empty holds events: put it in its place.
  void enter(int source) {
    const Event& key = front(source);
    int i = sources_++;
    while (i > 0 && earlier(key, front(order_[i - 1]))) {
      order_[i] = order_[i - 1];
      --i;
    }
    order_[i] = static_cast<uint8_t>(source);
  }
  void heap_push(const Event& e);
  Event heap_pop();

  Lane lanes_[kLanes];
  // The sources holding events (lane numbers, kHeap), earliest event first.
  uint8_t order_[kLanes + 1] = {};
  int sources_ = 0;
  std::vector<Event> heap_;
  size_t size_ = 0;
};

}  // namespace grove::sim
