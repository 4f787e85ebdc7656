#include "transport/sim/recv_queue.hpp"

#include <cstring>

namespace grove::sim {
namespace {

// Flag bits: which fields differ from the previous receive. kNextChannel:
// the tag is the previous one's on the next channel (a ring's receives), so
// it needs no integer. RecvQueue::kRepeatByte (64) alone: the receive
// differs from the previous one as that one differed from its own
// predecessor (RecvQueue::Step).
constexpr uint8_t kContext = 1, kData = 2, kCapacity = 4, kDone = 8, kTag = 16, kNextChannel = 32;

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

}  // namespace

uint64_t RecvQueue::get(const std::vector<uint8_t>& in, size_t& at) {
  uint64_t v = 0;
  for (int shift = 0;; shift += 7) {
    const uint8_t byte = in[at++];
    v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (byte < 0x80) return v;
  }
}

RecvQueue::Step RecvQueue::step_between(const PostedRecv& from, const PostedRecv& to) {
  Step step;
  step.context = bits(to.context) - bits(from.context);
  step.data = bits(to.data) - bits(from.data);
  step.tag = to.tag == from.tag                 ? kTagSame
             : to.tag == next_channel(from.tag) ? kTagNext
                                                : kTagOther;
  return step;
}

void RecvQueue::push_packed(const PostedRecv& r) {
  const Cursor& back = count_ == 1 ? front_ : back_;
  const PostedRecv& b = back.last;
  const Step step = step_between(b, r);
  ++count_;
  if (back.has_step && step == back.step && step.tag != kTagOther && r.capacity == b.capacity &&
      r.done == b.done) {
    packed_.push_back(kRepeatByte);
    back_.last = r;  // back is back_: front_ has no step
    return;
  }
  uint8_t flags = 0;
  if (step.context != 0) flags |= kContext;
  if (step.data != 0) flags |= kData;
  if (r.capacity != b.capacity) flags |= kCapacity;
  if (r.done != b.done) flags |= kDone;
  if (step.tag == kTagNext) flags |= kNextChannel;
  if (step.tag == kTagOther) flags |= kTag;
  std::vector<uint8_t>& out = packed_;
  out.push_back(flags);
  auto put = [&](uint64_t v) {
    while (v >= 0x80) {
      out.push_back(static_cast<uint8_t>(v | 0x80));
      v >>= 7;
    }
    out.push_back(static_cast<uint8_t>(v));
  };
  if (flags & kContext) put(zigzag(step.context));
  if (flags & kData) put(zigzag(step.data));
  if (flags & kCapacity) put(zigzag(uint64_t{r.capacity} - uint64_t{b.capacity}));
  if (flags & kDone) {
    uint8_t done[sizeof(CompletionFn)];
    std::memcpy(done, &r.done, sizeof(CompletionFn));
    out.insert(out.end(), done, done + sizeof(CompletionFn));
  }
  if (flags & kTag) put(zigzag(r.tag - b.tag));
  back_ = Cursor{r, step, true};
}

void RecvQueue::read(const std::vector<uint8_t>& in, size_t& at, Cursor& cursor) {
  PostedRecv& r = cursor.last;
  const uint8_t flags = in[at++];
  if (flags == kRepeatByte) {
    const Step& step = cursor.step;
    r.context = reinterpret_cast<void*>(static_cast<uintptr_t>(bits(r.context) + step.context));
    r.data = reinterpret_cast<std::byte*>(static_cast<uintptr_t>(bits(r.data) + step.data));
    if (step.tag == kTagNext) r.tag = next_channel(r.tag);
    return;
  }
  const PostedRecv previous = r;
  if (flags & kContext)
    r.context = reinterpret_cast<void*>(
        static_cast<uintptr_t>(bits(previous.context) + unzigzag(get(in, at))));
  if (flags & kData)
    r.data = reinterpret_cast<std::byte*>(
        static_cast<uintptr_t>(bits(previous.data) + unzigzag(get(in, at))));
  if (flags & kCapacity)
    r.capacity = static_cast<size_t>(previous.capacity + unzigzag(get(in, at)));
  if (flags & kDone) {
    std::memcpy(&r.done, in.data() + at, sizeof(CompletionFn));
    at += sizeof(CompletionFn);
  }
  if (flags & kNextChannel) r.tag = next_channel(previous.tag);
  if (flags & kTag) r.tag = previous.tag + unzigzag(get(in, at));
  cursor.step = step_between(previous, r);
  cursor.has_step = true;
}

void RecvQueue::read_next() {
  read(packed_, head_, front_);
  if (head_ == packed_.size()) {
    packed_.clear();
    head_ = 0;
  } else if (head_ > 4096 && head_ * 2 > packed_.size()) {
    // Most of the storage is consumed: move the rest to the front.
    packed_.erase(packed_.begin(), packed_.begin() + static_cast<std::ptrdiff_t>(head_));
    head_ = 0;
  }
}

bool RecvQueue::remove(Tag tag, const void* context, PostedRecv& out) {
  if (count_ == 0) return false;
  if (front_.last.tag == tag && front_.last.context == context) {
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
  packed_.clear();
  head_ = 0;
  count_ = 0;
  for (const PostedRecv& r : all)
    push(r);
  return true;
}

std::vector<PostedRecv> RecvQueue::list() const {
  std::vector<PostedRecv> out;
  if (count_ == 0) return out;
  out.push_back(front_.last);
  Cursor cursor = front_;
  size_t at = head_;
  for (size_t i = 1; i < count_; ++i) {
    read(packed_, at, cursor);
    out.push_back(cursor.last);
  }
  return out;
}

}  // namespace grove::sim
