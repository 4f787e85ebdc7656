// The simulator's compact structures against plain reference containers:
// the event queue's order, the stream table's lookups through inserts and
// removals, and the packed receive queue's round trip and matching by tag.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "transport/sim/event_queue.hpp"
#include "transport/sim/recv_queue.hpp"
#include "transport/sim/stream_table.hpp"
#include "transport/tag.hpp"

namespace grove::sim {
namespace {

void done_a(void*, const Status&) {}
void done_b(void*, const Status&) {}

// A tag after `previous`: mostly its next channel (a ring's receives), or
// another channel, or the same.
Tag next_tag(std::mt19937_64& rng, Tag previous) {
  switch (rng() % 4) {
    case 0:
      return tag::with_channel(previous, static_cast<uint32_t>(rng() % 64));
    case 1:
      return previous;
    default:
      return tag::with_channel(previous, tag::channel(previous) + 1);
  }
}

void expect_same(const PostedRecv& got, const PostedRecv& want, int op) {
  ASSERT_EQ(got.context, want.context) << op;
  ASSERT_EQ(got.data, want.data) << op;
  ASSERT_EQ(got.capacity, want.capacity) << op;
  ASSERT_EQ(got.done, want.done) << op;
  ASSERT_EQ(got.tag, want.tag) << op;
}

TEST(SimEventQueue, LeavesInTimeThenInsertionOrder) {
  std::mt19937_64 rng(7);
  EventQueue queue;
  // (time, seq) -> the event.
  std::map<std::pair<Time, uint64_t>, Event> reference;
  uint64_t seq = 0;
  Time now = 0;
  size_t popped = 0;
  // Pushes at or after `now` (as the engine does), mostly in order per
  // kind, some not; pops interleaved.
  for (int round = 0; round < 20000; ++round) {
    const int pushes = static_cast<int>(rng() % 3);
    for (int p = 0; p < pushes; ++p) {
      const auto kind = static_cast<uint8_t>(rng() % 7);
      const Time delay = rng() % 4 == 0 ? static_cast<Time>(rng() % 1000) : 100 * (kind + 1);
      const Event e{now + delay, seq++, static_cast<uint32_t>(rng()), kind};
      queue.push(e);
      reference.emplace(std::make_pair(e.time, e.seq), e);
    }
    if (!queue.empty() && rng() % 2 == 0) {
      const Event want = reference.begin()->second;
      reference.erase(reference.begin());
      ASSERT_EQ(queue.top().seq, want.seq);
      const Taken got = queue.pop();  // the top, whose seq is checked above
      ASSERT_EQ(got.time, want.time) << "pop " << popped;
      ASSERT_EQ(got.id, want.id);
      ASSERT_EQ(got.kind, want.kind);
      now = got.time;
      ++popped;
    }
    ASSERT_EQ(queue.size(), reference.size());
  }
  EXPECT_GT(popped, 5000u);
}

TEST(SimStreamTable, FindsWhatWasAddedUntilRemoved) {
  std::mt19937_64 rng(11);
  StreamTable table;
  std::map<std::pair<int, int>, uint32_t> reference;
  for (int op = 0; op < 200000; ++op) {
    const StreamKey key{static_cast<int32_t>(rng() % 150), static_cast<int32_t>(rng() % 150)};
    const auto ref_key = std::make_pair(key.dst, key.src);
    auto it = reference.find(ref_key);
    if (rng() % 3 == 0 && it != reference.end()) {
      table.remove(it->second);
      reference.erase(it);
      ASSERT_EQ(table.find(key), kNoStream);
    } else {
      const uint32_t stream = table.find_or_add(key);
      if (it != reference.end()) {
        ASSERT_EQ(stream, it->second);
      }
      reference[ref_key] = stream;
      ASSERT_TRUE(table.key(stream) == key);
    }
    ASSERT_EQ(table.size(), reference.size());
  }
  for (const auto& [k, stream] : reference)
    ASSERT_EQ(table.find(StreamKey{k.first, k.second}), stream);
  EXPECT_EQ(table.live().size(), reference.size());
}

TEST(SimRecvQueue, GivesBackWhatWasPostedInOrder) {
  std::mt19937_64 rng(3);
  RecvQueue queue;
  std::deque<PostedRecv> reference;
  auto* base = reinterpret_cast<std::byte*>(uintptr_t{1} << 40);
  for (int op = 0; op < 100000; ++op) {
    if (reference.empty() || rng() % 5 < 3) {
      PostedRecv r;
      // Mostly regular (a constant context step, near-equal lengths), sometimes not.
      const size_t i = reference.size();
      r.context =
          reinterpret_cast<void*>(uintptr_t{0x100000000} + 128 * i + (rng() % 9 == 0 ? rng() : 0));
      r.data = rng() % 4 == 0 ? nullptr : base + rng() % 100000;
      r.capacity = rng() % 7 == 0 ? rng() : 104 + rng() % 2;
      r.done = rng() % 11 == 0 ? &done_b : &done_a;
      r.tag = next_tag(rng, reference.empty() ? tag::make(5, 77, tag::Topology::none, 3, 62)
                                              : reference.back().tag);
      queue.push(r);
      reference.push_back(r);
    } else {
      const PostedRecv got = queue.pop();
      const PostedRecv want = reference.front();
      reference.pop_front();
      expect_same(got, want, op);
    }
    ASSERT_EQ(queue.size(), reference.size());
    if (op % 997 == 0) {
      const std::vector<PostedRecv> all = queue.list();
      ASSERT_EQ(all.size(), reference.size());
      for (size_t i = 0; i < all.size(); ++i)
        expect_same(all[i], reference[i], op);
    }
  }
}

// A ring's receives: a constant context step, blocks of two lengths in
// runs, the next channel each time. Steps equal to the previous one pack to
// one byte; the others and every receive come back exactly, through pops
// and a removal that repacks.
TEST(SimRecvQueue, RunsOfEqualStepsPackToOneByteEachAndComeBackExactly) {
  RecvQueue queue;
  std::deque<PostedRecv> reference;
  auto* base = reinterpret_cast<std::byte*>(uintptr_t{1} << 40);
  size_t offset = 0;
  constexpr int kCount = 5000;
  for (int i = 0; i < kCount; ++i) {
    const size_t length = i < 1700 || (i > 3000 && i % 500 != 7) ? 3496 : 3495;
    PostedRecv r;
    r.context = reinterpret_cast<void*>(uintptr_t{0x700000000} + 2 * uint64_t(i));
    r.data = base + offset;
    r.capacity = length;
    r.done = i == 4000 ? &done_b : &done_a;
    r.tag = tag::with_channel(tag::make(1, 0, tag::Topology::none, 0, 0), static_cast<uint32_t>(i));
    offset += length;
    queue.push(r);
    reference.push_back(r);
  }
  // A few dozen receives break the run (where the length or the completion
  // changes, and the step after each); every other costs its one byte.
  EXPECT_LT(queue.packed_bytes(), size_t{kCount} + 300);
  PostedRecv got;
  ASSERT_TRUE(queue.remove(reference[2500].tag, reference[2500].context, got));
  expect_same(got, reference[2500], 2500);
  reference.erase(reference.begin() + 2500);
  const std::vector<PostedRecv> all = queue.list();
  ASSERT_EQ(all.size(), reference.size());
  for (size_t i = 0; i < all.size(); ++i)
    expect_same(all[i], reference[i], static_cast<int>(i));
  for (int i = 0; !reference.empty(); ++i) {
    expect_same(queue.pop(), reference.front(), i);
    reference.pop_front();
  }
  EXPECT_TRUE(queue.empty());
}

// remove(): a cancelled receive leaves the queue wherever it is (oldest,
// middle or newest) and the others come out in their order, unchanged.
TEST(SimRecvQueue, RemoveTakesOutOneAndKeepsTheRestInOrder) {
  std::mt19937_64 rng(5);
  RecvQueue queue;
  std::deque<PostedRecv> reference;
  auto* base = reinterpret_cast<std::byte*>(uintptr_t{1} << 40);
  for (int op = 0; op < 20000; ++op) {
    const uint64_t choice = rng() % 8;
    if (reference.empty() || choice < 4) {
      PostedRecv r;
      r.context = reinterpret_cast<void*>(uintptr_t{0x100000000} + 64 * uint64_t(op));
      r.data = base + rng() % 1000;
      r.capacity = 100 + rng() % 3;
      r.done = rng() % 11 == 0 ? &done_b : &done_a;
      r.tag = static_cast<Tag>(rng() % 3);
      queue.push(r);
      reference.push_back(r);
    } else if (choice < 6) {
      const size_t at = rng() % reference.size();
      PostedRecv got;
      ASSERT_TRUE(queue.remove(reference[at].tag, reference[at].context, got)) << op;
      expect_same(got, reference[at], op);
      reference.erase(reference.begin() + static_cast<std::ptrdiff_t>(at));
    } else if (choice == 6) {
      PostedRecv got;
      ASSERT_FALSE(queue.remove(0, reinterpret_cast<void*>(uintptr_t{7}), got)) << op;
      // The right context on another tag is not it either.
      const PostedRecv& some = reference[rng() % reference.size()];
      ASSERT_FALSE(queue.remove(some.tag + 3, some.context, got)) << op;
    } else {
      const PostedRecv got = queue.pop();
      ASSERT_EQ(got.context, reference.front().context) << op;
      ASSERT_EQ(got.data, reference.front().data) << op;
      ASSERT_EQ(got.capacity, reference.front().capacity) << op;
      reference.pop_front();
    }
    ASSERT_EQ(queue.size(), reference.size());
  }
  const std::vector<PostedRecv> all = queue.list();
  ASSERT_EQ(all.size(), reference.size());
  for (size_t i = 0; i < all.size(); ++i) {
    ASSERT_EQ(all[i].context, reference[i].context);
    ASSERT_EQ(all[i].data, reference[i].data);
  }
}

// take(): a message takes the oldest receive of its tag, wherever it is;
// receives of other tags stay, in their order.
TEST(SimRecvQueue, TakeGivesTheOldestReceiveOfTheTag) {
  std::mt19937_64 rng(9);
  RecvQueue queue;
  std::deque<PostedRecv> reference;
  auto* base = reinterpret_cast<std::byte*>(uintptr_t{1} << 40);
  size_t taken = 0, behind = 0;
  for (int op = 0; op < 20000; ++op) {
    if (reference.empty() || rng() % 2 == 0) {
      PostedRecv r;
      r.context = reinterpret_cast<void*>(uintptr_t{0x100000000} + 2 * uint64_t(op));
      r.data = base + 64 * uint64_t(op);
      r.capacity = 64;
      r.done = &done_a;
      r.tag = next_tag(rng, reference.empty() ? Tag{0} : reference.back().tag) % 4;
      queue.push(r);
      reference.push_back(r);
    } else {
      const Tag wanted = rng() % 4;
      const auto it = std::find_if(reference.begin(), reference.end(),
                                   [&](const PostedRecv& r) { return r.tag == wanted; });
      PostedRecv got;
      ASSERT_EQ(queue.take(wanted, got), it != reference.end()) << op;
      if (it == reference.end()) continue;
      expect_same(got, *it, op);
      taken++;
      if (it != reference.begin()) behind++;
      reference.erase(it);
    }
    ASSERT_EQ(queue.size(), reference.size());
  }
  const std::vector<PostedRecv> all = queue.list();
  ASSERT_EQ(all.size(), reference.size());
  for (size_t i = 0; i < all.size(); ++i)
    expect_same(all[i], reference[i], -1);
  EXPECT_GT(taken, 5000u);
  EXPECT_GT(behind, 1000u);  // many were not the oldest of all
}

}  // namespace
}  // namespace grove::sim
