#pragma once
// The simulator's matching state, per stream (receiver, sender): the
// receives posted and not yet matched, and the messages arrived and not yet
// received, each with its tag. Tags are matched inside the stream (oldest
// receive of the message's tag; oldest message of the receive's tag), so
// a sender's messages on one tag stay in order whatever other tags do, and
// a ring's receiver keeps one stream for its left neighbour instead of one
// per channel (one per message: a ring's steps cycle through 64 channels).
//
// One open-addressing table (linear probing, at most half full) finds a
// stream in one cache line; streams live in a pool and are reused with
// their storage, so matching a message allocates nothing once the run is
// warm (a node-based hash map was a quarter of the simulator's time, mostly
// cache misses and node allocation).

#include <cstddef>
#include <cstdint>
#include <vector>

#include "transport/sim/recv_queue.hpp"
#include "transport/transport.hpp"

namespace grove::sim {

struct StreamKey {
  int32_t dst;
  int32_t src;
  bool operator==(const StreamKey&) const = default;
};

inline constexpr uint32_t kNoStream = UINT32_MAX;

// Cache-line aligned: a delivery reads the first two lines of its stream.
struct alignas(64) Stream {
  // Messages waiting for a receive, a FIFO of message ids linked through the
  // messages (UINT32_MAX: none). Both kinds wait at once only on different
  // tags.
  uint32_t arrived_head = UINT32_MAX;
  uint32_t arrived_tail = UINT32_MAX;
  RecvQueue posted;  // receives waiting for a message
  bool empty() const;
};

class StreamTable {
 public:
  StreamTable();
  // The stream of `key`, or kNoStream.
  uint32_t find(const StreamKey& key) const;
  // The stream of `key`, made (empty) if there is none.
  uint32_t find_or_add(const StreamKey& key);
  // Hints that `key` will be looked up soon: loads its home slot's line.
  void prefetch(const StreamKey& key) const { __builtin_prefetch(&slots_[home(key)]); }
  // Forgets empty stream `stream`, whose key is `key` (the caller knows it:
  // reading it here would load one more cache line); its storage is kept
  // for the next one.
  void remove(uint32_t stream, const StreamKey& key);

  Stream& at(uint32_t stream) { return streams_[stream]; }
  const Stream& at(uint32_t stream) const { return streams_[stream]; }
  const StreamKey& key(uint32_t stream) const { return keys_[stream]; }
  // Every live stream, in no particular order.
  std::vector<uint32_t> live() const;
  size_t size() const { return used_; }

 private:
  struct Slot {
    StreamKey key;
    uint32_t stream;  // kNoStream: empty slot
  };
  size_t home(const StreamKey& key) const;
  void grow();

  std::vector<Slot> slots_;  // a power of two long
  size_t used_ = 0;
  std::vector<Stream> streams_;
  std::vector<StreamKey> keys_;
  std::vector<uint32_t> free_;
};

}  // namespace grove::sim
