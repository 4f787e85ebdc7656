#pragma once
// The receives one rank posted for one sender and not yet matched, in
// posting order, each with its tag (a stream holds every tag of its
// sender: stream_table.hpp). The two oldest are kept as they are; the
// others are packed, each as what it adds to the one posted before it:
//
// - a repeat: it differs from its predecessor exactly as that one differed
//   from its own (a constant context step, data step and tag step: the
//   same tag or the next channel), with the same length and completion.
//   Repeats cost nothing each: a run of them is a count.
// - a near repeat: a repeat but for its length, a few bytes longer or
//   shorter than its predecessor's (an allgatherv's blocks): one byte.
// - otherwise a difference: a flag byte, then a variable-length integer
//   per field that changed (a tag on the next channel costs only its flag
//   bit).
//
// A ring allgather posts its N-1 receives at once on every rank, N(N-1) in
// all (10^8 at 10,000 ranks); successive receives of one sender differ by
// a constant context step, the next channel and a block's length, so they
// are runs of repeats broken where the block length changes: a few bytes
// per queue instead of a 64-byte record per receive, and taking the oldest
// reads only the queue itself. A ring reduce-scatter keeps one or two
// receives posted per sender: they stay as they are, so posting and
// matching one copies a record, no more.
//
// Matching takes the oldest receive of the message's tag. That is the
// oldest of all (one comparison) whenever receives are matched in the
// order they were posted, as most schedules' are. Any other receive
// (recv_queue_take.cpp) is found walking the queue from the oldest a run
// at a time (where in a run of repeats a tag falls is arithmetic), and
// taken out re-encoding only the two receives after it: the packed bytes
// before and after are kept as they are. A bcast scatter_allgather's
// receiver takes many receives out of order from a queue of up to N, each
// the oldest of its ring channel (63 cycle), so mostly among the oldest
// 63: a take costs a few entries and a copy of the queue's bytes, not
// the queue's length.

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
    if (count_ == 0) {
      front_ = r;
    } else if (count_ == 1) {
      second_ = r;
    } else if (count_ > 2 && repeats_back(r)) {  // the common case, inline
      if (no_entries())
        ++lead_;
      else
        ++tail_;
      back_ = r;  // the step stays
    } else {
      push_packed(r);
    }
    ++count_;
  }
  // The oldest, left in place; the queue must not be empty.
  const PostedRecv& front() const { return front_; }
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
    if (front_.tag == tag) {
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
  // Bytes the packed receives take (all but the two oldest), for tests.
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
  static uint64_t bits(const void* p) {
    return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p));
  }
  static Step step_between(const PostedRecv& from, const PostedRecv& to);
  // Whether `r` repeats the step that led to the newest (count_ > 2).
  bool repeats_back(const PostedRecv& r) const {
    const PostedRecv& b = back_;
    const Step& step = back_step_;
    return r.capacity == b.capacity && r.done == b.done &&
           bits(r.context) - bits(b.context) == step.context &&
           bits(r.data) - bits(b.data) == step.data &&
           (step.tag == kTagSame ? r.tag == b.tag
                                 : step.tag == kTagNext &&
                                       r.tag == tag::with_channel(b.tag, tag::channel(b.tag) + 1));
  }
  // The receive after `last` that repeats the step from `before` to `last`.
  static PostedRecv repeat(const PostedRecv& before, const PostedRecv& last);
  // Appends `r` behind the two oldest.
  void push_packed(const PostedRecv& r);
  void pop_into(PostedRecv& out) {
    out = front_;
    if (count_ >= 2) {
      if (count_ >= 3) {
        front_ = second_;
        second_ = next_after(out, front_);
      } else {
        front_ = second_;
      }
    }
    --count_;
  }
  // The packed receives, oldest first: `lead` repeats, then the entries of
  // packed_[head, end), then `tail` repeats. An entry is a run of repeats
  // (kRun and a count) or a difference. With no entry left, all remaining
  // repeats are `lead` (`tail` is 0).
  struct Reader {
    uint32_t lead, head, tail;
  };
  // The packed receive after `last` (whose predecessor is `before`), read
  // at `at`, which moves past it.
  static PostedRecv read(const std::vector<uint8_t>& packed, Reader& at, const PostedRecv& before,
                         const PostedRecv& last);
  // The k-th receive (k >= 1) after `last` in a run of repeats of the step
  // from `before` to `last`.
  static PostedRecv nth_repeat(const PostedRecv& before, const PostedRecv& last, uint64_t k);
  // The first k in [1, count] whose nth_repeat(before, last, k) has `tag`
  // (and, by_context, `context`); 0 when none has.
  static uint64_t find_in_run(const PostedRecv& before, const PostedRecv& last, uint64_t count,
                              Tag tag, bool by_context, const void* context);
  // Appends k >= 1 receives repeating the newest's step, the last of them
  // `last` (count_ >= 2; they must be repeats: the caller read them as such).
  void append_repeats(uint32_t k, const PostedRecv& last);
  // The receive after `last` (whose predecessor is `before`), taken from the
  // packed ones; at least one must be packed.
  PostedRecv next_after(const PostedRecv& before, const PostedRecv& last) {
    if (lead_ > 0) {
      --lead_;
      return repeat(before, last);
    }
    return read_packed(before, last);
  }
  PostedRecv read_packed(const PostedRecv& before, const PostedRecv& last);
  bool no_entries() const { return head_ == packed_.size(); }
  // The two oldest, the newest and the step that led to it (both valid when
  // count_ >= 3).
  const PostedRecv& newest() const { return count_ == 2 ? second_ : back_; }
  // Takes out the oldest receive but the front (which the caller checked)
  // with `tag` (and, by_context, `context`): see recv_queue_take.cpp.
  bool take_later(Tag tag, bool by_context, const void* context, PostedRecv& out);

  // In the order matching reads them (a stream puts two words before, so
  // the oldest, the count and the run of repeats share a cache line; the
  // second oldest and the packed bytes the next; the newest, read only
  // when posting, the third).
  PostedRecv front_;  // the oldest, when count_ > 0
  uint32_t count_ = 0;
  uint32_t lead_ = 0;  // repeats right after second_
  uint32_t head_ = 0;  // first unread byte of packed_
  uint32_t tail_ = 0;  // repeats after the last entry of packed_
  PostedRecv second_;  // the second oldest, when count_ > 1
  std::vector<uint8_t> packed_;
  PostedRecv back_;  // the newest, when count_ > 2
  Step back_step_;   // from the one before the newest to the newest, when count_ > 2
};

}  // namespace grove::sim
