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
// Taking the earliest compares the lanes' fronts and the heap's top: a few
// comparisons instead of a heap's log(n) levels (the heap was a quarter of
// the simulator's instructions).

#include <cstddef>
#include <cstdint>
#include <vector>

#include "transport/sim/sim_time.hpp"

namespace grove::sim {

struct Event {
  Time time;
  uint64_t seq;
  uint32_t id;
  uint8_t kind;
};

class EventQueue {
 public:
  static constexpr int kLanes = 8;  // one per event kind (kind < kLanes)

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  // The earliest pending event; the queue must not be empty.
  const Event& top() const;
  void push(const Event& e);
  Event pop();

 private:
  struct Lane {
    std::vector<Event> ring;  // a power of two long, or empty
    size_t head = 0, count = 0;
    const Event& front() const { return ring[head]; }
    const Event& back() const { return ring[(head + count - 1) & (ring.size() - 1)]; }
    void append(const Event& e);
  };
  // Where the earliest event is: a lane index, or kLanes for the heap.
  int earliest() const;
  void heap_push(const Event& e);
  Event heap_pop();

  Lane lanes_[kLanes];
  uint32_t busy_ = 0;  // bit i: lane i holds events
  std::vector<Event> heap_;
  size_t size_ = 0;
};

}  // namespace grove::sim
