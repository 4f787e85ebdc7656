#pragma once
// The simulator's pending events, earliest (time, seq) first. seq is the
// insertion number, so (time, seq) is a total order and the order events
// leave is fixed whatever the queue's shape: determinism does not depend on
// how this is built.
//
// Most events of one kind are scheduled in time order (a head arrival is
// always `latency` after its departure, which happens in time order), so
// each kind has a lane: a FIFO that takes an event no earlier than its
// last one. An event that would break its lane's order goes to one of the
// kind's spare lanes (the one whose last event is the latest not after it:
// a few lanes sort a merge of as many ordered sequences, as an alltoallv's
// deliveries of blocks a byte or two apart are), and only when none takes
// it to a 4-ary heap (which at 10,000 ranks outgrows the cache: a pop
// there is a few misses).
// The lanes holding events and the heap (the sources) are kept in an
// array ordered by their earliest event, each entry holding that event's
// (time, seq), so taking the earliest reads the first entry and compares
// its source's next event with the second entry, without visiting the
// second source: events of one kind come in runs (ranks in step post at
// equal times), and the source mostly stays first. Push and pop are
// inline: the engine does four of each per message.

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
  static constexpr int kKinds = 8;  // event kinds (kind < kKinds)
  // Lane kind + kKinds * j is kind's (j = 0 the first, then its spares).
  static constexpr int kLanesPerKind = 4;
  static constexpr int kLanes = kKinds * kLanesPerKind;

  bool empty() const { return sources_ == 0; }
  size_t size() const;
  // The earliest pending event; the queue must not be empty.
  Event top() const;
  Time top_time() const { return fronts_[0].time; }
  void push(const Event& e) { push(e.time, e.seq, e.id, e.kind); }
  void push(Time time, uint64_t seq, uint32_t id, uint8_t kind) {
    Lane& lane = lanes_[kind];
    // seq grows with every push, so not earlier in time means not earlier.
    if (lane.count != 0 && time < lane.last_time) {
      push_out_of_order(Event{time, seq, id, kind});
      return;
    }
    append(lane, kind, time, seq, id);
  }
  // The ids of the earliest source's first events: ids[k] the event k
  // places behind the earliest, for k below the count returned (at most
  // `n`; 0 when that source is the heap), all of kind `kind` (a lane's).
  // Mostly the events taken next (events of a kind come in runs): a hint
  // for prefetching what they will read, never an order.
  uint32_t peek(uint32_t* ids, uint32_t n, uint8_t& kind) const {
    if (sources_ == 0) return 0;
    const uint32_t source = fronts_[0].source;
    if (source == kHeap) return 0;
    const Lane& lane = lanes_[source];
    const uint32_t count = lane.count < n ? lane.count : n;
    const LaneEvent* ring = lane.ring.get();
    for (uint32_t k = 0; k < count; ++k)
      ids[k] = ring[(lane.head + k) & lane.mask].id;
    kind = static_cast<uint8_t>(source % kKinds);
    return count;
  }
  // The earliest pending event, taken out; the queue must not be empty.
  Taken pop() {
    Front& first = fronts_[0];
    const uint32_t source = first.source;
    if (source == kHeap) return heap_pop();
    Lane& lane = lanes_[source];
    const LaneEvent* ring = lane.ring.get();
    const uint32_t head = lane.head;
    const Taken taken{first.time, ring[head].id, static_cast<uint8_t>(source % kKinds)};
    const uint32_t next = (head + 1) & lane.mask;
    lane.head = next;
    if (--lane.count == 0) {
      leave_first();
      return taken;
    }
    const LaneEvent& e = ring[next];
    if (sources_ > 1 &&
        (fronts_[1].time < e.time || (fronts_[1].time == e.time && fronts_[1].seq < e.seq))) {
      sink_first(Front{e.time, e.seq, source});
    } else {  // the source stays first (the common case: runs of one kind)
      first.time = e.time;
      first.seq = e.seq;
    }
    return taken;
  }

 private:
  static constexpr uint32_t kHeap = kLanes;  // the heap's source number

  // A lane's event: its kind is the lane's.
  struct LaneEvent {
    Time time;
    uint64_t seq;
    uint32_t id;
  };
  struct Lane {
    std::unique_ptr<LaneEvent[]> ring;  // `capacity` long, a power of two (or 0)
    uint32_t capacity = 0;
    uint32_t mask = 0;  // capacity - 1
    uint32_t head = 0;  // the oldest event
    uint32_t tail = 0;  // where the next one goes
    uint32_t count = 0;
    Time last_time = 0;  // of the newest event, when count > 0
    void grow();
  };
  // A source holding events and its earliest event's (time, seq).
  struct Front {
    Time time;
    uint64_t seq;
    uint32_t source;
  };

  // Appends to lane `source` an event no earlier than its last one.
  void append(Lane& lane, uint32_t source, Time time, uint64_t seq, uint32_t id) {
    const bool was_empty = lane.count == 0;
    if (lane.count == lane.capacity) [[unlikely]]
      lane.grow();
    LaneEvent& slot = lane.ring[lane.tail];
    slot.time = time;
    slot.seq = seq;
    slot.id = id;
    lane.tail = (lane.tail + 1) & lane.mask;
    ++lane.count;
    lane.last_time = time;
    if (was_empty) enter(Front{time, seq, source});
  }
  // An event earlier than its kind's first lane's last: a spare lane or the heap.
  void push_out_of_order(const Event& e);

  static bool earlier(const Front& a, const Front& b) {
    return a.time < b.time || (a.time == b.time && a.seq < b.seq);
  }
  static bool earlier(const Event& a, const Event& b) {
    return a.time < b.time || (a.time == b.time && a.seq < b.seq);
  }
  // The first source's earliest event is now `key` (later than before):
  // move the source down to its place.
  void sink_first(const Front& key) {
    int i = 0;
    while (i + 1 < sources_ && earlier(fronts_[i + 1], key)) {
      fronts_[i] = fronts_[i + 1];
      ++i;
    }
    fronts_[i] = key;
  }
  // The first source is empty: drop it.
  void leave_first() {
    --sources_;
    for (int i = 0; i < sources_; ++i)
      fronts_[i] = fronts_[i + 1];
  }
  // A source that was empty holds events: put it in its place.
  void enter(const Front& key) {
    int i = sources_++;
    while (i > 0 && earlier(key, fronts_[i - 1])) {
      fronts_[i] = fronts_[i - 1];
      --i;
    }
    fronts_[i] = key;
  }
  void heap_push(const Event& e);
  Taken heap_pop();

  // The sources holding events (lane numbers, kHeap), earliest event first.
  Front fronts_[kLanes + 1] = {};
  int sources_ = 0;
  Lane lanes_[kLanes];
  std::vector<Event> heap_;
};

}  // namespace grove::sim
