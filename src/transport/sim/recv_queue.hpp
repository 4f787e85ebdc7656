#pragma once
// The receives one rank posted for one sender and not yet matched, in
// posting order, each with its tag (a stream holds every tag of its
// sender: stream_table.hpp). The oldest is kept as is; the others are
// packed, each as the difference from the one posted before it (a flag
// byte, then a variable-length integer per field that changed; a tag on
// the next channel of the previous one costs only its flag bit), or as one
// byte saying it differs from its predecessor exactly as that one differed
// from its own (a step along a run). A ring allgather posts its N-1
// receives at once on every rank, N(N-1) in all (10^8 at 10,000 ranks);
// successive receives of one sender differ by a constant context step, the
// next channel and a block's length, so most cost one byte here, the others
// 2 to 5, instead of a 64-byte record, and packing or unpacking one is a
// few comparisons. A queue with one receive (most of them) packs nothing.
//
// Matching takes the oldest receive of the message's tag. That is the
// oldest of all (one comparison) whenever receives are matched in the
// order they were posted, as every schedule's are; any other receive is
// taken out by unpacking and repacking the queue.

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
  Tag tag = 0;
};

class RecvQueue {
 public:
  bool empty() const { return count_ == 0; }
  size_t size() const { return count_; }
  void push(const PostedRecv& r) {
    if (count_ == 0) {  // the oldest is kept as is
      front_.last = r;
      front_.has_step = false;
      count_ = 1;
      return;
    }
    if (count_ >= 2 && repeats(r)) {  // the common case, inline
      packed_.push_back(kRepeatByte);
      back_.last = r;
      ++count_;
      return;
    }
    push_packed(r);
  }
  // The oldest; the queue must not be empty.
  PostedRecv pop() {
    PostedRecv out;
    pop_into(out);
    return out;
  }
  // Takes out the oldest receive posted for `tag`, keeping the others in
  // order; false when none has it.
  bool take(Tag tag, PostedRecv& out) {
    if (count_ == 0) return false;
    if (front_.last.tag == tag) {
      pop_into(out);
      return true;
    }
    return take_later(tag, false, nullptr, out);
  }
  // Takes out the receive for `tag` whose context is `context` (the first
  // such), keeping the others in order; false when none has it.
  bool remove(Tag tag, const void* context, PostedRecv& out);
  // Every queued receive, oldest first, without removing any.
  std::vector<PostedRecv> list() const;
  // Bytes the packed receives take (all but the oldest), for tests.
  size_t packed_bytes() const { return packed_.size() - head_; }

 private:
  // How a receive differs from the one before it: what a repeat repeats.
  struct Step {
    uint64_t context = 0;  // difference of the contexts' bits
    uint64_t data = 0;     // difference of the data addresses
    uint8_t tag = 0;       // kTagSame, kTagNext (channel) or kTagOther
    bool operator==(const Step&) const = default;
  };
  static constexpr uint8_t kTagSame = 0, kTagNext = 1, kTagOther = 2;
  static constexpr uint8_t kRepeatByte = 64;  // recv_queue.cpp's kRepeat
  static uint64_t bits(const void* p) {
    return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p));
  }
  // Whether `r` steps from the newest (which a step led to) as it did.
  bool repeats(const PostedRecv& r) const {
    const PostedRecv& b = back_.last;
    const Step& step = back_.step;
    return back_.has_step && r.capacity == b.capacity && r.done == b.done &&
           bits(r.context) - bits(b.context) == step.context &&
           bits(r.data) - bits(b.data) == step.data &&
           (step.tag == kTagSame ? r.tag == b.tag
                                 : step.tag == kTagNext &&
                                       r.tag == tag::with_channel(b.tag, tag::channel(b.tag) + 1));
  }
  static Step step_between(const PostedRecv& from, const PostedRecv& to);
  // Where unpacking is: the receive read last and the step that led to it.
  struct Cursor {
    PostedRecv last;
    Step step;
    bool has_step = false;  // false for the oldest, which no step led to
  };
  static uint64_t get(const std::vector<uint8_t>& in, size_t& at);
  // Reads the receive after cursor.last from in[at] into cursor.last;
  // advances both.
  static void read(const std::vector<uint8_t>& in, size_t& at, Cursor& cursor);
  void pop_into(PostedRecv& out) {
    out = front_.last;
    if (--count_ != 0) read_next();
  }
  void push_packed(const PostedRecv& r);
  // Unpacks the next receive into front_ (one was popped).
  void read_next();
  // The first receive after the oldest with `tag` (and `context` if
  // `by_context`), taken out by repacking the others.
  bool take_later(Tag tag, bool by_context, const void* context, PostedRecv& out);

  // In the order matching reads them: the oldest, the count and the
  // packed bytes share two cache lines; the newest is read when posting.
  Cursor front_;  // the oldest (its `last`), when count_ > 0
  size_t count_ = 0;
  size_t head_ = 0;              // first unread byte of packed_
  std::vector<uint8_t> packed_;  // the others, oldest first, each relative to the one before
  Cursor back_;                  // the newest, when count_ > 1 (else front_): the next push's base
};

}  // namespace grove::sim
