// The receive queue's out-of-order path (recv_queue_take.cpp) against a
// plain list: taking the oldest receive of a tag or a cancelled receive
// from anywhere in a queue of packed runs (inside a run, at a run's ends,
// near the newest end) leaves exactly the list's receives, in its order.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <random>
#include <vector>

#include "transport/sim/recv_queue.hpp"
#include "transport/tag.hpp"
#include "unit/sim/recv_queue_checks.hpp"

namespace grove::sim {
namespace {

using recv_checks::done_a;
using recv_checks::done_b;
using recv_checks::expect_same;

void expect_lists(const RecvQueue& queue, const std::deque<PostedRecv>& reference, int op) {
  const std::vector<PostedRecv> all = queue.list();
  ASSERT_EQ(all.size(), reference.size()) << op;
  for (size_t i = 0; i < all.size(); ++i)
    expect_same(all[i], reference[i], op);
}

// Receives as schedules post them: long runs of one step (the next block,
// the next channel, wrapping at 64 or, as bcast scatter_allgather's ring,
// from 63 to 1), broken now and then by another length (a few bytes or
// far), completion, context step, or the same tag instead of the next.
class Poster {
 public:
  explicit Poster(uint64_t seed) : rng_(seed) {
    next_.context = reinterpret_cast<void*>(uintptr_t{0x500000000});
    next_.data = reinterpret_cast<std::byte*>(uintptr_t{1} << 40);
    next_.capacity = 4096;
    next_.done = &done_a;
    next_.tag = tag::make(3, 9, tag::Topology::none, 1, 1);
  }
  std::mt19937_64& rng() { return rng_; }
  PostedRecv post() {
    if (rng_() % 40 == 0) {
      switch (rng_() % 7) {
        case 0:
          next_.capacity += 1 + rng_() % 3;
          break;
        case 1:
          next_.capacity = 1 + rng_() % 100000;
          break;
        case 2:
          context_step_ = 1 + rng_() % 7;
          break;
        case 3:
          next_.done = next_.done == &done_a ? &done_b : &done_a;
          break;
        case 4:
          same_tag_ = !same_tag_;
          break;
        case 5:  // the next collective's receives: found only past all of these
          next_.tag = tag::make(3, ++sequence_, tag::Topology::none, 1, tag::channel(next_.tag));
          break;
        default:
          skip_zero_ = !skip_zero_;
          break;
      }
    }
    const PostedRecv r = next_;
    next_.context =
        reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(next_.context) + context_step_);
    next_.data += next_.capacity;
    if (!same_tag_) {
      uint32_t channel = tag::channel(next_.tag) + 1;
      if (skip_zero_ && channel == 64) channel = 1;
      next_.tag = tag::with_channel(next_.tag, channel);
    }
    return r;
  }

 private:
  std::mt19937_64 rng_;
  PostedRecv next_;
  uint64_t context_step_ = 2;
  bool same_tag_ = false;
  bool skip_zero_ = false;
  uint32_t sequence_ = 9;
};

// Pushes (one or a burst), pops, takes by tag (mostly of a receive near the newest end, as
// a relay's early blocks are; some anywhere, some of a tag no receive
// has) and removals by context, checked against a list after every one.
TEST(SimRecvQueue, TakesAndRemovesAnywhereExactlyLikeAList) {
  size_t taken = 0, deep = 0, removed = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    Poster poster(seed);
    std::mt19937_64& rng = poster.rng();
    RecvQueue queue;
    std::deque<PostedRecv> reference;
    for (int op = 0; op < 40000; ++op) {
      const uint64_t choice = rng() % 100;
      if (reference.size() < 3 || choice < 40 || (choice < 43 && reference.size() < 1000)) {
        // One, or a burst as a ring posts them.
        const uint64_t count = choice < 40 ? 1 : 100 + rng() % 200;
        for (uint64_t c = 0; c < count; ++c) {
          const PostedRecv r = poster.post();
          queue.push(r);
          reference.push_back(r);
        }
      } else if (choice < 60) {
        expect_same(queue.pop(), reference.front(), op);
        reference.pop_front();
      } else if (choice < 92) {
        const size_t n = reference.size();
        const size_t at = rng() % 3 == 0 ? rng() % n : n - 1 - rng() % std::min<size_t>(n, 8);
        const Tag wanted = reference[at].tag;
        const auto it = std::find_if(reference.begin(), reference.end(),
                                     [&](const PostedRecv& r) { return r.tag == wanted; });
        PostedRecv got;
        ASSERT_TRUE(queue.take(wanted, got)) << op;
        expect_same(got, *it, op);
        if (it - reference.begin() > 64) ++deep;
        reference.erase(it);
        ++taken;
      } else if (choice < 94) {
        PostedRecv got;
        ASSERT_FALSE(queue.take(tag::make(4, 9, tag::Topology::none, 1, 1), got)) << op;
      } else {
        const PostedRecv& want = reference[rng() % reference.size()];
        const auto it = std::find_if(reference.begin(), reference.end(), [&](const PostedRecv& r) {
          return r.tag == want.tag && r.context == want.context;
        });
        PostedRecv got;
        ASSERT_TRUE(queue.remove(want.tag, want.context, got)) << op;
        expect_same(got, *it, op);
        reference.erase(it);
        ++removed;
      }
      ASSERT_EQ(queue.size(), reference.size()) << op;
      if (op % 101 == 0) expect_lists(queue, reference, op);
    }
    expect_lists(queue, reference, -1);
    while (!reference.empty()) {
      expect_same(queue.pop(), reference.front(), -1);
      reference.pop_front();
    }
    EXPECT_TRUE(queue.empty());
  }
  EXPECT_GT(taken, 50000u);
  EXPECT_GT(deep, 1000u);  // found past whole runs, not only among the oldest
  EXPECT_GT(removed, 10000u);
}

// A bcast scatter_allgather receiver: N - 1 ring receives posted at once,
// channels 1 + j mod 63; its left neighbour's own blocks (its last ring
// steps) arrive early and take receives at the newest end, each the
// oldest of its channel once fewer than 63 wait. Every take is exact, the
// packed bytes stay a few per run (a take re-encodes two receives), and
// the rest come out in order.
TEST(SimRecvQueue, ARelaysEarlyBlocksTakeFromTheNewestEndExactly) {
  constexpr int kRing = 3000, kEarly = 40;
  auto ring_recv = [](int j) {
    PostedRecv r;
    r.context = reinterpret_cast<void*>(uintptr_t{0x300000000} + 3 * uint64_t(j));
    r.data = reinterpret_cast<std::byte*>((uintptr_t{1} << 40) + 350 * uint64_t(j));
    r.capacity = 350;
    r.done = &done_a;
    r.tag = tag::make(2, 5, tag::Topology::none, 7, 1 + static_cast<uint32_t>(j % 63));
    return r;
  };
  RecvQueue queue;
  std::deque<PostedRecv> reference;
  for (int j = 0; j < kRing; ++j) {
    queue.push(ring_recv(j));
    reference.push_back(ring_recv(j));
  }
  const size_t bytes = queue.packed_bytes();
  EXPECT_LT(bytes, size_t{kRing / 63 * 12});  // 11: a run and two differences
  // In order until 60 wait (each channel once), then the early blocks.
  while (reference.size() > kEarly + 20) {
    expect_same(queue.pop(), reference.front(), 0);
    reference.pop_front();
  }
  for (int j = kRing - kEarly; j < kRing; ++j) {
    const Tag wanted = ring_recv(j).tag;
    const auto it = std::find_if(reference.begin(), reference.end(),
                                 [&](const PostedRecv& r) { return r.tag == wanted; });
    PostedRecv got;
    ASSERT_TRUE(queue.take(wanted, got)) << j;
    expect_same(got, *it, j);
    expect_same(got, ring_recv(j), j);
    reference.erase(it);
    EXPECT_LT(queue.packed_bytes(), size_t{64}) << j;
  }
  expect_lists(queue, reference, -1);
  for (int i = 0; !reference.empty(); ++i) {
    expect_same(queue.pop(), reference.front(), i);
    reference.pop_front();
  }
  EXPECT_TRUE(queue.empty());
}

}  // namespace
}  // namespace grove::sim
