// RecvQueue: taking out a receive other than the oldest (a message that
// matches out of posting order, or a cancelled receive).
//
// The queue is r_0 (front_), r_1 (second_), then packed: the entries of
// recv_queue_format.hpp, each read against the two receives before it
// (a repeat or a run of them repeats their step, a difference adds to the
// one before). So taking out r_p changes how r_{p+1} and r_{p+2} are read
// (their predecessors change) and nothing else: r_{p+3} on are read
// against r_{p+1} and r_{p+2}, which stay. take_later walks from r_1 a
// segment at a time (one entry, or a whole run of repeats, whose tags are
// arithmetic) to the oldest receive that matches, then builds the queue
// again from
//
//   the bytes of the entries before r_p's segment, as they are;
//   the repeats of that segment before r_p, as a count;
//   r_{p+1} and r_{p+2}, pushed (packed against their new predecessors);
//   what follows r_{p+2}: the rest of its run as a count, then the bytes
//   of the entries after, as they are, and the tail's count.
//
// Its cost is the entries before r_p plus a copy of the packed bytes,
// where unpacking and repacking the whole queue cost its length (a bcast
// scatter_allgather's ranks take thousands of receives out of queues of
// up to N, docs/simulator.md).

#include <cassert>

#include "transport/sim/recv_queue.hpp"
#include "transport/sim/recv_queue_format.hpp"

namespace grove::sim {

using packed::kRun;

uint64_t RecvQueue::find_in_run(const PostedRecv& before, const PostedRecv& last, uint64_t count,
                                Tag tag, bool by_context, const void* context) {
  auto has_context = [&](uint64_t k) {
    return !by_context || nth_repeat(before, last, k).context == context;
  };
  if (last.tag == before.tag) {  // every repeat has last's tag
    if (last.tag != tag) return 0;
    for (uint64_t k = 1; k <= count; ++k)
      if (has_context(k)) return k;
    return 0;
  }
  // The k-th repeat's tag is last's on channel + k (mod 64), the rest of
  // the tag as last's.
  if (((tag ^ last.tag) & ~tag::kChannelMask) != 0) return 0;
  uint64_t k = (tag::channel(tag) - tag::channel(last.tag)) & ((1u << tag::kChannelBits) - 1);
  if (k == 0) k = uint64_t{1} << tag::kChannelBits;
  for (; k <= count; k += uint64_t{1} << tag::kChannelBits)
    if (has_context(k)) return k;
  return 0;
}

void RecvQueue::append_repeats(uint32_t k, const PostedRecv& last) {
  assert(count_ >= 2 && k >= 1);
  if (count_ == 2) back_step_ = step_between(front_, second_);
  if (no_entries())
    lead_ += k;
  else
    tail_ += k;
  back_ = last;  // the step stays
  count_ += k;
}

bool RecvQueue::take_later(Tag tag, bool by_context, const void* context, PostedRecv& out) {
  if (count_ < 2) return false;
  auto matches = [&](const PostedRecv& r) {
    return r.tag == tag && (!by_context || r.context == context);
  };
  const auto end = static_cast<uint32_t>(packed_.size());

  // The walk: `last` is r_i, `before` r_{i-1}; `at` reads what follows.
  PostedRecv before = front_, last = second_;
  uint32_t i = 1;
  Reader at{lead_, head_, tail_};

  // Where r_p's segment starts: r_s, read against (seg_before, seg_last) =
  // (r_{s-2}, r_{s-1}), its entry at byte seg_byte, the queue's own lead
  // count before it unless it is that lead run; `repeats` of its run come
  // before r_p.
  uint32_t p = 1, s = 1, seg_byte = head_, seg_lead = 0;
  uint64_t repeats = 0;
  PostedRecv seg_before, seg_last;
  if (!matches(second_)) {
    for (;;) {
      seg_before = before;
      seg_last = last;
      s = i + 1;
      seg_byte = at.head;
      seg_lead = i == 1 ? 0 : lead_;
      uint64_t run = 0;
      if (at.lead > 0) {  // the queue's lead run, or its tail
        run = at.lead;
        at.lead = 0;
      } else if (at.head < end && packed_[at.head] == kRun) {
        ++at.head;
        run = packed::get(packed_, at.head);
        if (at.head == end) {  // the tail's repeats come next
          at.lead = at.tail;
          at.tail = 0;
        }
      } else if (at.head < end) {  // one receive
        const PostedRecv r = read(packed_, at, before, last);
        before = last;
        last = r;
        ++i;
        if (matches(r)) {
          p = i;
          break;
        }
        continue;
      } else {
        return false;
      }
      const uint64_t k = find_in_run(before, last, run, tag, by_context, context);
      if (k > 0) {
        p = static_cast<uint32_t>(i + k);
        repeats = k - 1;
        // What follows r_p: the rest of the run, then (at.lead) the tail's.
        at.lead += static_cast<uint32_t>(run - k);
        before = k == 1 ? seg_last : nth_repeat(seg_before, seg_last, k - 1);
        last = nth_repeat(seg_before, seg_last, k);
        break;
      }
      // Past the run: its last two receives.
      before = run == 1 ? seg_last : nth_repeat(seg_before, seg_last, run - 1);
      last = nth_repeat(seg_before, seg_last, run);
      i += static_cast<uint32_t>(run);
    }
  }
  out = last;  // r_p; `before` is r_{p-1}, `at` reads r_{p+1} on

  // q packs into the buffer the last take left (its capacity reused:
  // allocating one per take was a third of a take's instructions).
  static thread_local std::vector<uint8_t> spare;
  RecvQueue q;
  q.packed_ = std::move(spare);
  q.packed_.clear();
  q.packed_.reserve(packed_.size() - head_ + 96);  // two receives more at most
  q.front_ = front_;
  q.count_ = 1;
  if (p >= 2) {
    q.second_ = second_;
    q.count_ = s;
    q.lead_ = seg_lead;
    q.packed_.assign(packed_.begin() + head_, packed_.begin() + seg_byte);
    q.back_ = seg_last;
    if (s >= 3) q.back_step_ = step_between(seg_before, seg_last);
    if (repeats > 0) q.append_repeats(static_cast<uint32_t>(repeats), before);
  }
  uint32_t rest = count_ - p - 1;  // receives after r_p
  for (int j = 0; j < 2 && rest > 0; ++j, --rest) {
    const PostedRecv r = read(packed_, at, before, last);
    q.push(r);
    before = last;
    last = r;
  }
  if (rest > 0) {  // r_{p+3} on: read against r_{p+1} and r_{p+2}, as in q
    if (at.lead > 0) {
      if (q.no_entries())
        q.lead_ += at.lead;
      else
        q.tail_ += at.lead;
    }
    if (at.head < end) {
      if (q.tail_ > 0) {
        q.packed_.push_back(kRun);
        packed::put(q.packed_, q.tail_);
        q.tail_ = 0;
      }
      q.packed_.insert(q.packed_.end(), packed_.begin() + at.head, packed_.end());
      q.tail_ = at.tail;
    }
    q.back_ = back_;
    q.back_step_ = back_step_;
    q.count_ += rest;
  }
  assert(q.count_ == count_ - 1);
  spare = std::move(packed_);
  *this = std::move(q);
  return true;
}

}  // namespace grove::sim
