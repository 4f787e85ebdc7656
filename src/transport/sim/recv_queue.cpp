#include "transport/sim/recv_queue.hpp"

#include <cstring>

namespace grove::sim {
namespace {

// An entry's flag byte: which fields differ from the previous receive.
// kNextChannel: the tag is the previous one's on the next channel (a
// ring's receives), so it needs no integer. kRun alone: a run of repeats,
// its count follows.
constexpr uint8_t kContext = 1, kData = 2, kCapacity = 4, kDone = 8, kTag = 16, kNextChannel = 32;
constexpr uint8_t kRun = 64;
// kNear: a repeat but for its capacity, which differs from the previous
// receive's by the zigzag integer in the low 7 bits (an allgatherv's
// blocks differ by a few bytes from one to the next): one byte.
constexpr uint8_t kNear = 128;

// Differences as zigzag integers: small either way round, small encoding.
uint64_t zigzag(uint64_t difference) {
  const auto d = static_cast<int64_t>(difference);
  return (static_cast<uint64_t>(d) << 1) ^ static_cast<uint64_t>(d >> 63);
}
uint64_t unzigzag(uint64_t z) {
  return (z >> 1) ^ (~(z & 1) + 1);
}

Tag next_channel(Tag t) {
  return tag::with_channel(t, tag::channel(t) + 1);
}

uint64_t get(const std::vector<uint8_t>& in, uint32_t& at) {
  uint64_t v = 0;
  for (int shift = 0;; shift += 7) {
    const uint8_t byte = in[at++];
    v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (byte < 0x80) return v;
  }
}

void put(std::vector<uint8_t>& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<uint8_t>(v));
}

}  // namespace

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

void RecvQueue::clear() {
  count_ = lead_ = head_ = tail_ = 0;
  packed_.clear();
}

bool RecvQueue::remove(Tag tag, const void* context, PostedRecv& out) {
  if (count_ == 0) return false;
  if (front_.tag == tag && front_.context == context) {
    out = pop();
    return true;
  }
  return take_later(tag, true, context, out);
}

bool RecvQueue::take_later(Tag tag, bool by_context, const void* context, PostedRecv& out) {
  std::vector<PostedRecv> all = list();
  size_t at = 1;
  while (at < all.size() && (all[at].tag != tag || (by_context && all[at].context != context)))
    ++at;
  if (at == all.size()) return false;
  out = all[at];
  all.erase(all.begin() + static_cast<std::ptrdiff_t>(at));
  clear();
  for (const PostedRecv& r : all)
    push(r);
  return true;
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
