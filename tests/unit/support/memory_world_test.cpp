#include "support/memory_world.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <thread>
#include <vector>

namespace grove {
namespace {

struct Done {
  bool called = false;
  Status status;
  static void fn(void* context, const Status& status) {
    auto* self = static_cast<Done*>(context);
    EXPECT_FALSE(self->called) << "completion called twice";
    self->called = true;
    self->status = status;
  }
};

std::vector<std::byte> bytes(std::string_view text) {
  std::vector<std::byte> out(text.size());
  std::memcpy(out.data(), text.data(), text.size());
  return out;
}

TEST(MemoryWorld, MatchesBySourceAndTagInOrder) {
  for (auto mode : {MemoryWorld::SendMode::eager, MemoryWorld::SendMode::immediate,
                    MemoryWorld::SendMode::rendezvous}) {
    for (uint64_t seed : {0, 1, 2, 3}) {
      MemoryWorld world(3, {seed, mode});
      const auto a = bytes("aaaa"), b = bytes("bbbb"), c = bytes("cccc");
      Done s1, s2, s3;
      // Two messages on tag 5 from rank 0, one on tag 6 from rank 2.
      world.transport(0).send(1, 5, a.data(), a.size(), Done::fn, &s1);
      world.transport(0).send(1, 5, b.data(), b.size(), Done::fn, &s2);
      world.transport(2).send(1, 6, c.data(), c.size(), Done::fn, &s3);
      std::vector<std::byte> r1(4), r2(4), r3(4);
      Done d1, d2, d3;
      world.transport(1).recv(2, 6, r3.data(), r3.size(), Done::fn, &d3);
      world.transport(1).recv(0, 5, r1.data(), r1.size(), Done::fn, &d1);
      world.transport(1).recv(0, 5, r2.data(), r2.size(), Done::fn, &d2);
      world.run_until(
          [&] {
            return d1.called && d2.called && d3.called && s1.called && s2.called && s3.called;
          },
          1000);
      EXPECT_EQ(r1, a);  // non-overtaking within (source, tag)
      EXPECT_EQ(r2, b);
      EXPECT_EQ(r3, c);
      EXPECT_TRUE(d1.status.ok && d2.status.ok && d3.status.ok);
      EXPECT_EQ(d1.status.length, 4u);
      EXPECT_TRUE(world.quiescent());
    }
  }
}

TEST(MemoryWorld, TruncationIsReported) {
  MemoryWorld world(2);
  const auto a = bytes("too long");
  std::vector<std::byte> r(3);
  Done s, d;
  world.transport(1).recv(0, 1, r.data(), r.size(), Done::fn, &d);
  world.transport(0).send(1, 1, a.data(), a.size(), Done::fn, &s);
  world.run_until([&] { return s.called && d.called; }, 100);
  EXPECT_FALSE(d.status.ok);
  EXPECT_EQ(d.status.code, Errc::truncated);
  EXPECT_EQ(std::memcmp(r.data(), "too", 3), 0);
}

TEST(MemoryWorld, ProbeSeesUnmatchedMessages) {
  MemoryWorld world(2);
  const auto a = bytes("x");
  Done s;
  const Tag t = tag::make(1, 2, tag::Topology::none, 7, 3);
  world.transport(0).send(1, t, a.data(), a.size(), Done::fn, &s);
  world.run_until([&] { return s.called; }, 10);
  world.transport(1).progress();
  auto found = world.transport(1).probe(-1, tag::with_channel(t, 3) ^ tag::kStampMask,
                                        tag::kTagMask & ~tag::kStampMask);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->source, 0);
  EXPECT_EQ(tag::stamp(found->tag), 7u);
  EXPECT_FALSE(world.transport(1).probe(0, t + 1, tag::kTagMask).has_value());
}

TEST(MemoryWorld, ActiveMessagesWaitForTheirHandler) {
  MemoryWorld world(2, {5, MemoryWorld::SendMode::eager});
  const auto a = bytes("one"), b = bytes("two");
  world.transport(0).am_send(1, 9, a);
  world.transport(0).am_send(1, 9, b);
  world.progress_all();
  std::vector<std::string> got;
  world.transport(1).set_am_handler(9, [&](int source, std::span<const std::byte> payload) {
    EXPECT_EQ(source, 0);
    got.emplace_back(reinterpret_cast<const char*>(payload.data()), payload.size());
  });
  world.run_until([&] { return got.size() == 2; }, 100);
  EXPECT_EQ(got[0], "one");
  EXPECT_EQ(got[1], "two");
}

TEST(MemoryWorld, DepartedPeerFailsReceives) {
  MemoryWorld world(2);
  std::vector<std::byte> r(1);
  Done d;
  world.transport(1).recv(0, 1, r.data(), r.size(), Done::fn, &d);
  world.depart(0);
  world.run_until([&] { return d.called; }, 10);
  EXPECT_EQ(d.status.code, Errc::peer_failed);
}

// cancel(): the completion runs once, at the next progress, with
// Errc::cancelled; the message sent later is matched by the next receive,
// not written into the cancelled one's buffer.
TEST(MemoryWorld, CancelledReceiveIsReportedAndLeftAlone) {
  MemoryWorld world(2);
  std::vector<std::byte> cancelled(3, std::byte{0x55}), next(3);
  Done c, n;
  world.transport(1).recv(0, 1, cancelled.data(), cancelled.size(), Done::fn, &c);
  world.transport(1).cancel(0, 1, &c, CancelMode::request);
  EXPECT_FALSE(c.called);  // never inside cancel()
  world.run_until([&] { return c.called; }, 10);
  EXPECT_EQ(c.status.code, Errc::cancelled);
  const auto a = bytes("abc");
  Done s;
  world.transport(0).send(1, 1, a.data(), a.size(), Done::fn, &s);
  world.transport(1).recv(0, 1, next.data(), next.size(), Done::fn, &n);
  world.run_until([&] { return n.called && s.called; }, 10);
  EXPECT_EQ(next, a);
  EXPECT_EQ(cancelled, std::vector<std::byte>(3, std::byte{0x55}));
  // Cancelling what already completed, or what was never posted, does nothing.
  world.transport(1).cancel(0, 1, &n, CancelMode::request);
  world.transport(1).cancel(0, 9, &n, CancelMode::fail_peer);
  EXPECT_FALSE(world.progress_all());
}

TEST(MemoryWorld, CancelledRendezvousSendIsTakenBack) {
  MemoryWorld world(2, {0, MemoryWorld::SendMode::rendezvous});
  const auto a = bytes("xyz");
  Done s, r;
  world.transport(0).send(1, 4, a.data(), a.size(), Done::fn, &s);
  world.progress_all();  // arrived, unmatched
  world.transport(0).cancel(1, 4, &s, CancelMode::request);
  world.run_until([&] { return s.called; }, 10);
  EXPECT_EQ(s.status.code, Errc::cancelled);
  std::vector<std::byte> got(3);
  world.transport(1).recv(0, 4, got.data(), got.size(), Done::fn, &r);
  world.progress_all();
  EXPECT_FALSE(r.called);
  EXPECT_TRUE(world.quiescent());
  world.transport(1).cancel(0, 4, &r, CancelMode::request);
  world.run_until([&] { return r.called; }, 10);
}

TEST(MemoryWorld, DepartedPeerDeliversWhatItSentFirst) {
  MemoryWorld world(2);
  const auto a = bytes("last words");
  Done s;
  world.transport(0).send(1, 1, a.data(), a.size(), Done::fn, &s);
  world.depart(0);
  std::vector<std::byte> r1(a.size()), r2(a.size());
  Done d1, d2;
  world.transport(1).recv(0, 1, r1.data(), r1.size(), Done::fn, &d1);
  world.transport(1).recv(0, 1, r2.data(), r2.size(), Done::fn, &d2);  // after the departure
  world.run_until([&] { return d1.called && d2.called; }, 10);
  EXPECT_TRUE(d1.status.ok);
  EXPECT_EQ(r1, a);
  EXPECT_EQ(d2.status.code, Errc::peer_failed);
}

TEST(MemoryWorld, StallIsReportedNotHung) {
  MemoryWorld world(2);
  std::vector<std::byte> r(1);
  Done d;
  world.transport(1).recv(0, 1, r.data(), r.size(), Done::fn, &d);
  try {
    world.run_until([&] { return d.called; }, 1000, "lonely recv");
    FAIL() << "stall not detected";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::timeout);
    EXPECT_NE(std::string(e.what()).find("lonely recv"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("recv from 0"), std::string::npos);
  }
}

TEST(MemoryWorld, ThreadPerRankWithBlockingWaits) {
  constexpr int kRanks = 4;
  MemoryWorld world(kRanks);
  std::vector<std::thread> threads;
  std::vector<int> received(kRanks, -1);
  for (int r = 0; r < kRanks; ++r) {
    threads.emplace_back([&, r] {
      Transport& t = world.transport(r);
      const int value = r;
      int incoming = -1;
      Done s, d;
      t.recv((r + kRanks - 1) % kRanks, 1, &incoming, sizeof incoming, Done::fn, &d);
      t.send((r + 1) % kRanks, 1, &value, sizeof value, Done::fn, &s);
      for (int i = 0; i < 10000 && !(s.called && d.called); ++i) {
        if (!t.progress()) t.block(-1, std::chrono::milliseconds(10));
      }
      received[r] = incoming;
    });
  }
  for (auto& th : threads)
    th.join();
  for (int r = 0; r < kRanks; ++r)
    EXPECT_EQ(received[r], (r + kRanks - 1) % kRanks);
}

}  // namespace
}  // namespace grove
