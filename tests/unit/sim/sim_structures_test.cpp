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
#include "unit/sim/recv_queue_checks.hpp"

namespace grove::sim {
namespace {

using recv_checks::done_a;
using recv_checks::done_b;
using recv_checks::expect_same;

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

// list() gives exactly `reference`, and so do pops until the queue is empty.
void expect_lists_then_pops(RecvQueue& queue, std::deque<PostedRecv> reference) {
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
      table.remove(it->second, key);
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
// runs, the next channel each time. Receives that repeat the previous step
// pack to nothing (a run is a count); the others and every receive come
// back exactly, through pops and a removal that repacks.
TEST(SimRecvQueue, RunsOfEqualStepsPackToACountAndComeBackExactly) {
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
  // changes, and the step after each): a difference each, and a run's
  // count before it; the thousands of others cost nothing.
  EXPECT_GT(queue.packed_bytes(), 0u);
  EXPECT_LT(queue.packed_bytes(), size_t{300});
  PostedRecv got;
  ASSERT_TRUE(queue.remove(reference[2500].tag, reference[2500].context, got));
  expect_same(got, reference[2500], 2500);
  reference.erase(reference.begin() + 2500);
  expect_lists_then_pops(queue, reference);
}

// An allgatherv ring's receives: the step of a repeat, but blocks whose
// lengths cycle by a byte or two (and one far longer): one byte each, and
// every receive comes back exactly.
TEST(SimRecvQueue, LengthsAFewBytesApartPackToAByteEach) {
  RecvQueue queue;
  std::deque<PostedRecv> reference;
  constexpr int kCount = 3000;
  for (int i = 0; i < kCount; ++i) {
    PostedRecv r;
    r.context = reinterpret_cast<void*>(uintptr_t{0x700000000} + 2 * uint64_t(i));
    r.capacity = i == 1500 ? 1 << 20 : 1000 + (kCount - i) % 3;
    r.done = &done_a;
    r.tag = tag::with_channel(tag::make(1, 0, tag::Topology::none, 0, 0), static_cast<uint32_t>(i));
    queue.push(r);
    reference.push_back(r);
  }
  // A byte for each of the packed receives but the two around the long
  // one, which take a few more.
  EXPECT_GE(queue.packed_bytes(), size_t{kCount - 2});
  EXPECT_LT(queue.packed_bytes(), size_t{kCount + 8});
  expect_lists_then_pops(queue, reference);
}

// Mostly runs of repeats, broken now and then (another length, context
// step or completion, the same channel instead of the next), with pops
// interleaved, so runs end while they are read and new ones start behind:
// every receive comes back in order, and list() sees them all.
TEST(SimRecvQueue, RunsBrokenAndReadWhileTheyGrowComeBackInOrder) {
  std::mt19937_64 rng(13);
  RecvQueue queue;
  std::deque<PostedRecv> reference;
  auto* base = reinterpret_cast<std::byte*>(uintptr_t{1} << 40);
  PostedRecv next;
  next.context = reinterpret_cast<void*>(uintptr_t{0x500000000});
  next.data = base;
  next.capacity = 4096;
  next.done = &done_a;
  next.tag = tag::make(3, 9, tag::Topology::none, 1, 0);
  uint64_t context_step = 2;
  uint64_t data_step = 4096;
  bool same_tag = false;
  for (int op = 0; op < 200000; ++op) {
    if (rng() % 3 != 0) {
      if (rng() % 50 == 0) {  // break the run
        switch (rng() % 4) {
          case 0:
            next.capacity += 1 + rng() % 3;
            break;
          case 1:
            context_step = 1 + rng() % 7;
            break;
          case 2:
            next.done = next.done == &done_a ? &done_b : &done_a;
            break;
          default:
            same_tag = !same_tag;
            break;
        }
      }
      queue.push(next);
      reference.push_back(next);
      next.context =
          reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(next.context) + context_step);
      next.data += data_step;
      if (!same_tag) next.tag = tag::with_channel(next.tag, tag::channel(next.tag) + 1);
    } else if (!reference.empty()) {
      expect_same(queue.pop(), reference.front(), op);
      reference.pop_front();
    }
    ASSERT_EQ(queue.size(), reference.size());
    if (op % 4999 == 0) {
      const std::vector<PostedRecv> all = queue.list();
      ASSERT_EQ(all.size(), reference.size());
      for (size_t i = 0; i < all.size(); ++i)
        expect_same(all[i], reference[i], op);
    }
  }
  // Runs cost nothing: far fewer packed bytes than receives waiting.
  EXPECT_LT(queue.packed_bytes(), reference.size() / 4);
  while (!reference.empty()) {
    expect_same(queue.pop(), reference.front(), -1);
    reference.pop_front();
  }
  EXPECT_TRUE(queue.empty());
}

// One run: nothing packed at all, whatever its length; and a queue that
// holds one or two receives at a time (a ring reduce-scatter's) packs
// nothing either. Every receive comes back exactly.
TEST(SimRecvQueue, ARunAndTwoAtATimePackNothing) {
  auto* base = reinterpret_cast<std::byte*>(uintptr_t{1} << 40);
  auto ring_recv = [&](int i) {
    PostedRecv r;
    r.context = reinterpret_cast<void*>(uintptr_t{0x300000000} + 5 * uint64_t(i));
    r.data = base + 1000 * uint64_t(i);
    r.capacity = 1000;
    r.done = &done_a;
    r.tag = tag::with_channel(tag::make(2, 0, tag::Topology::none, 0, 0), static_cast<uint32_t>(i));
    return r;
  };
  RecvQueue queue;
  constexpr int kCount = 20000;
  for (int i = 0; i < kCount; ++i)
    queue.push(ring_recv(i));
  EXPECT_EQ(queue.packed_bytes(), 0u);
  ASSERT_EQ(queue.size(), size_t{kCount});
  for (int i = 0; i < kCount; ++i)
    expect_same(queue.pop(), ring_recv(i), i);
  EXPECT_TRUE(queue.empty());

  // Posted one step ahead, matched in order: at most two wait.
  queue.push(ring_recv(0));
  for (int i = 1; i < kCount; ++i) {
    queue.push(ring_recv(i));
    EXPECT_EQ(queue.packed_bytes(), 0u);
    expect_same(queue.pop(), ring_recv(i - 1), i);
  }
  expect_same(queue.pop(), ring_recv(kCount - 1), kCount);
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
