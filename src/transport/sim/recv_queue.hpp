#pragma once
// The receives posted for one (receiver, sender, tag) and not yet matched,
// in posting order. The oldest is kept as is; the others are packed, each
// as the difference from the one posted before it (a flag byte, then a
// variable-length integer per field that changed). A ring allgather posts
// its N-1 receives at once on every rank, N(N-1) in all (10^8 at 10,000
// ranks); successive receives of one stream differ by a constant context
// step and at most a byte of length, so each costs 2 to 4 bytes here
// instead of a 64-byte record. A stream with one receive (most of them)
// packs nothing.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "transport/transport.hpp"

namespace grove::sim {

struct PostedRecv {
  std::byte* data = nullptr;
  size_t capacity = 0;
  CompletionFn done = nullptr;
  void* context = nullptr;
};

class RecvQueue {
 public:
  bool empty() const { return count_ == 0; }
  size_t size() const { return count_; }
  void push(const PostedRecv& r);
  PostedRecv pop();  // the oldest; the queue must not be empty
  // Takes out the receive whose context is `context` (the first such),
  // keeping the others in order; false when none has it. The oldest is
  // taken at once (an execution cancels in posting order); any other
  // repacks the queue.
  bool remove(const void* context, PostedRecv& out);
  // Every queued receive, oldest first, without removing any.
  std::vector<PostedRecv> list() const;

 private:
  static uint64_t get(const std::vector<uint8_t>& in, size_t& at);
  static PostedRecv read(const std::vector<uint8_t>& in, size_t& at, const PostedRecv& previous);

  PostedRecv front_;             // the oldest, when count_ > 0
  PostedRecv back_;              // the newest, when count_ > 0: what the next push is relative to
  std::vector<uint8_t> packed_;  // the others, oldest first, each relative to the one before
  size_t head_ = 0;              // first unread byte of packed_
  size_t count_ = 0;
};

}  // namespace grove::sim
