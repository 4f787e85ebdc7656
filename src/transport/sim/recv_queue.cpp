#include "transport/sim/recv_queue.hpp"

#include <cstring>

#include "transport/sim/recv_queue_format.hpp"

namespace grove::sim {

using namespace packed;

RecvQueue::Step RecvQueue::step_between(const PostedRecv& from, const PostedRecv& to) {
  Step step;
  step.context = bits(to.context) - bits(from.context);
  step.data = bits(to.data) - bits(from.data);
  step.tag = to.tag == from.tag                 ? kTagSame
             : to.tag == next_channel(from.tag) ? kTagNext
                                                : kTagOther;
  return step;
}

PostedRecv RecvQueue::repeat(const PostedRecv& before, const PostedRecv& last) {
  PostedRecv r = last;
  r.context = reinterpret_cast<void*>(
      static_cast<uintptr_t>(2 * bits(last.context) - bits(before.context)));
  r.data =
      reinterpret_cast<std::byte*>(static_cast<uintptr_t>(2 * bits(last.data) - bits(before.data)));
  // A repeat's step moves the tag by the same channel or the next one.
  if (last.tag != before.tag) r.tag = next_channel(last.tag);
  return r;
}

PostedRecv RecvQueue::nth_repeat(const PostedRecv& before, const PostedRecv& last, uint64_t k) {
  PostedRecv r = last;
  r.context = reinterpret_cast<void*>(
      static_cast<uintptr_t>(bits(last.context) + k * (bits(last.context) - bits(before.context))));
  r.data = reinterpret_cast<std::byte*>(
      static_cast<uintptr_t>(bits(last.data) + k * (bits(last.data) - bits(before.data))));
  // As repeat(), k times (channels wrap at 64: k's low bits are enough).
  if (last.tag != before.tag)
    r.tag = tag::with_channel(last.tag, tag::channel(last.tag) + static_cast<uint32_t>(k));
  return r;
}

void RecvQueue::push_packed(const PostedRecv& r) {
  const PostedRecv& last = newest();
  const Step step = count_ == 2 ? step_between(front_, second_) : back_step_;
  const Step next = step_between(last, r);
  const bool repeats = next == step && step.tag != kTagOther && r.done == last.done;
  const uint64_t capacity_change = zigzag(uint64_t{r.capacity} - uint64_t{last.capacity});
  if (repeats && capacity_change == 0) {
    if (no_entries())
      ++lead_;
    else
      ++tail_;
  } else {
    if (tail_ > 0) {
      packed_.push_back(kRun);
      put(packed_, tail_);
      tail_ = 0;
    }
    if (repeats && capacity_change < kNear) {
      packed_.push_back(static_cast<uint8_t>(kNear | capacity_change));
      back_ = r;
      back_step_ = next;
      return;
    }
    uint8_t flags = 0;
    if (next.context != 0) flags |= kContext;
    if (next.data != 0) flags |= kData;
    if (r.capacity != last.capacity) flags |= kCapacity;
    if (r.done != last.done) flags |= kDone;
    if (next.tag == kTagNext) flags |= kNextChannel;
    if (next.tag == kTagOther) flags |= kTag;
    packed_.push_back(flags);
    if (flags & kContext) put(packed_, zigzag(next.context));
    if (flags & kData) put(packed_, zigzag(next.data));
    if (flags & kCapacity) put(packed_, zigzag(uint64_t{r.capacity} - uint64_t{last.capacity}));
    if (flags & kDone) {
      uint8_t done[sizeof(CompletionFn)];
      std::memcpy(done, &r.done, sizeof(CompletionFn));
      packed_.insert(packed_.end(), done, done + sizeof(CompletionFn));
    }
    if (flags & kTag) put(packed_, zigzag(r.tag - last.tag));
  }
  back_ = r;  // `last` may be back_: read above
  back_step_ = next;
}

PostedRecv RecvQueue::read(const std::vector<uint8_t>& in, Reader& at, const PostedRecv& before,
                           const PostedRecv& last) {
  PostedRecv r;
  if (at.lead > 0) {
    --at.lead;
    r = repeat(before, last);
  } else {
    const uint8_t flags = in[at.head++];
    if (flags & kNear) {
      r = repeat(before, last);
      r.capacity = static_cast<size_t>(last.capacity + unzigzag(flags & (kNear - 1)));
    } else if (flags == kRun) {
      at.lead = static_cast<uint32_t>(get(in, at.head) - 1);
      r = repeat(before, last);
    } else {
      r = last;
      if (flags & kContext)
        r.context = reinterpret_cast<void*>(
            static_cast<uintptr_t>(bits(last.context) + unzigzag(get(in, at.head))));
      if (flags & kData)
        r.data = reinterpret_cast<std::byte*>(
            static_cast<uintptr_t>(bits(last.data) + unzigzag(get(in, at.head))));
      if (flags & kCapacity)
        r.capacity = static_cast<size_t>(last.capacity + unzigzag(get(in, at.head)));
      if (flags & kDone) {
        std::memcpy(&r.done, in.data() + at.head, sizeof(CompletionFn));
        at.head += sizeof(CompletionFn);
      }
      if (flags & kNextChannel) r.tag = next_channel(last.tag);
      if (flags & kTag) r.tag = last.tag + unzigzag(get(in, at.head));
    }
  }
  if (at.head == in.size()) {  // no entry left: the tail's repeats come next
    at.lead += at.tail;
    at.tail = 0;
  }
  return r;
}

PostedRecv RecvQueue::read_packed(const PostedRecv& before, const PostedRecv& last) {
  Reader at{lead_, head_, tail_};
  const PostedRecv r = read(packed_, at, before, last);
  lead_ = at.lead;
  head_ = at.head;
  tail_ = at.tail;
  if (no_entries()) {
    packed_.clear();
    head_ = 0;
  } else if (head_ > 4096 && size_t{head_} * 2 > packed_.size()) {
    // Most of the storage is consumed: move the rest to the front.
    packed_.erase(packed_.begin(), packed_.begin() + head_);
    head_ = 0;
  }
  return r;
}

bool RecvQueue::remove(Tag tag, const void* context, PostedRecv& out) {
  if (count_ == 0) return false;
  if (front_.tag == tag && front_.context == context) {
    out = pop();
    return true;
  }
  return take_later(tag, true, context, out);
}

std::vector<PostedRecv> RecvQueue::list() const {
  std::vector<PostedRecv> out;
  if (count_ == 0) return out;
  out.reserve(count_);
  out.push_back(front_);
  if (count_ == 1) return out;
  out.push_back(second_);
  Reader at{lead_, head_, tail_};
  for (uint32_t i = 2; i < count_; ++i)
    out.push_back(read(packed_, at, out[i - 2], out[i - 1]));
  return out;
}

}  // namespace grove::sim
