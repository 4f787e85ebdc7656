// transport.hpp's contract on the simulator: matching by (source, tag),
// non-overtaking, truncation, probe, active messages, departed peers,
// determinism and conservation.

#include <gtest/gtest.h>

#include <map>
#include <numeric>
#include <vector>

#include "grove/error.hpp"
#include "transport/sim/sim_world.hpp"

namespace grove::sim {
namespace {

struct Completion {
  SimWorld* world = nullptr;
  int calls = 0;
  Status status;
  Time at = -1;
  static void fn(void* context, const Status& status) {
    auto* c = static_cast<Completion*>(context);
    c->calls++;
    c->status = status;
    c->at = c->world->now();
  }
};

void ignore(void*, const Status&) {}

std::vector<std::byte> bytes_of(std::initializer_list<int> values) {
  std::vector<std::byte> v;
  for (int x : values)
    v.push_back(static_cast<std::byte>(x));
  return v;
}

TEST(SimSemantics, MatchesBySourceAndTagInSendOrder) {
  // pLogP with a tiny o_s for small messages and jitter: a later small
  // message would finish its software first, yet must not overtake.
  SimConfig c;
  c.model = CostModel::plogp;
  c.threads = 4;
  c.jitter = 3;
  c.plogp = std::make_shared<PlogpTable>(
      PlogpTable::from_rows(5, {{0, 0.1, 0.1, 0.5}, {1 << 20, 500, 400, 900}}));
  SimWorld world(3, c);
  auto big = std::vector<std::byte>(1 << 20, std::byte{1});
  auto small1 = bytes_of({2});
  auto small2 = bytes_of({3});
  std::vector<std::byte> a(1 << 20), b(1), d(1);
  Completion ca{&world}, cb{&world}, cd{&world};
  // Receives posted for tag 5 in order; the first needs the big message.
  world.transport(1).recv(0, 5, a.data(), a.size(), &Completion::fn, &ca);
  world.transport(1).recv(0, 5, b.data(), 1 << 20, &Completion::fn, &cb);
  world.transport(1).recv(2, 5, d.data(), 1, &Completion::fn, &cd);
  world.transport(0).send(1, 5, big.data(), big.size(), &ignore, nullptr);
  world.transport(0).send(1, 5, small1.data(), 1, &ignore, nullptr);
  world.transport(2).send(1, 5, small2.data(), 1, &ignore, nullptr);
  world.run();
  EXPECT_EQ(ca.status.length, size_t{1} << 20);
  EXPECT_EQ(a, big);
  EXPECT_EQ(cb.status.length, 1u);
  EXPECT_EQ(b[0], std::byte{2});
  EXPECT_EQ(d[0], std::byte{3});
  EXPECT_LE(ca.at, cb.at);
}

TEST(SimSemantics, TagsDoNotMix) {
  SimWorld world(2, SimConfig{});
  auto x = bytes_of({10}), y = bytes_of({20});
  std::vector<std::byte> rx(1), ry(1);
  Completion cx{&world}, cy{&world};
  world.transport(0).send(1, 1, x.data(), 1, &ignore, nullptr);
  world.transport(0).send(1, 2, y.data(), 1, &ignore, nullptr);
  world.run();  // both arrive unexpected
  world.transport(1).recv(0, 2, ry.data(), 1, &Completion::fn, &cy);
  world.transport(1).recv(0, 1, rx.data(), 1, &Completion::fn, &cx);
  EXPECT_EQ(cx.calls + cy.calls, 0);  // completions come from the event loop
  world.run();
  EXPECT_EQ(rx[0], std::byte{10});
  EXPECT_EQ(ry[0], std::byte{20});
}

// One sender's messages on several tags wait in one stream (receiver,
// sender) and are matched by tag inside it: a receive takes the oldest
// message of its tag even when another tag's message arrived before it, a
// message takes the oldest receive of its tag even when another tag's
// receive was posted before it, and each tag keeps its sending order.
TEST(SimSemantics, TagsOfOneSenderMatchInsideItsStreamInOrder) {
  SimWorld world(3, SimConfig{});
  constexpr Tag kA = 7, kB = 8;
  // From rank 0, in this order: A1 B1 A2 B2 A3; from rank 2: C on tag A.
  const auto a1 = bytes_of({0xa1, 1}), b1 = bytes_of({0xb1}), a2 = bytes_of({0xa2, 2, 2});
  const auto b2 = bytes_of({0xb2, 2}), a3 = bytes_of({0xa3}), c = bytes_of({0xc0});
  world.transport(0).send(1, kA, a1.data(), a1.size(), &ignore, nullptr);
  world.transport(0).send(1, kB, b1.data(), b1.size(), &ignore, nullptr);
  world.transport(0).send(1, kA, a2.data(), a2.size(), &ignore, nullptr);
  world.transport(0).send(1, kB, b2.data(), b2.size(), &ignore, nullptr);
  world.transport(0).send(1, kA, a3.data(), a3.size(), &ignore, nullptr);
  world.transport(2).send(1, kA, c.data(), c.size(), &ignore, nullptr);
  world.run();  // all six arrived, none matched
  auto first = world.transport(1).probe(0, 0, 0);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->tag, kA);  // the earliest from rank 0
  EXPECT_EQ(first->length, a1.size());
  // Tag B while A1 waits ahead of B1: B1, then B2.
  std::vector<std::byte> rb1(4), rb2(4);
  Completion cb1{&world}, cb2{&world};
  world.transport(1).recv(0, kB, rb1.data(), rb1.size(), &Completion::fn, &cb1);
  world.transport(1).recv(0, kB, rb2.data(), rb2.size(), &Completion::fn, &cb2);
  world.run();
  ASSERT_EQ(cb1.calls, 1);
  ASSERT_EQ(cb2.calls, 1);
  EXPECT_EQ(cb1.status.length, b1.size());
  EXPECT_EQ(cb2.status.length, b2.size());
  EXPECT_EQ(std::vector<std::byte>(rb1.begin(), rb1.begin() + 1), b1);
  EXPECT_EQ(std::vector<std::byte>(rb2.begin(), rb2.begin() + 2), b2);
  EXPECT_LE(cb1.at, cb2.at);
  // Tag A from rank 0 still in sending order, rank 2's C apart.
  std::vector<std::vector<std::byte>> ra(3, std::vector<std::byte>(4));
  std::vector<Completion> ca(3, Completion{&world});
  std::vector<std::byte> rc(1);
  Completion cc{&world};
  world.transport(1).recv(2, kA, rc.data(), 1, &Completion::fn, &cc);
  for (int i = 0; i < 3; ++i)
    world.transport(1).recv(0, kA, ra[i].data(), 4, &Completion::fn, &ca[i]);
  world.run();
  const std::vector<std::byte>* want[3] = {&a1, &a2, &a3};
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(ca[i].calls, 1) << i;
    ASSERT_EQ(ca[i].status.length, want[i]->size()) << i;
    EXPECT_EQ(std::vector<std::byte>(ra[i].begin(), ra[i].begin() + want[i]->size()), *want[i])
        << i;
  }
  EXPECT_EQ(rc, c);
  EXPECT_FALSE(world.transport(1).probe(-1, 0, 0).has_value());

  // Receives first: A, A, B posted; B's message comes first and takes the
  // B receive past the two older A receives; then A's in order. A receive
  // for B and a message on A wait in the stream at once.
  std::vector<std::byte> x1(1), x2(1), y(1), z(1);
  Completion cx1{&world}, cx2{&world}, cy{&world}, cz{&world};
  world.transport(1).recv(0, kA, x1.data(), 1, &Completion::fn, &cx1);
  world.transport(1).recv(0, kA, x2.data(), 1, &Completion::fn, &cx2);
  world.transport(1).recv(0, kB, y.data(), 1, &Completion::fn, &cy);
  const auto m_b = bytes_of({0x1b}), m_a1 = bytes_of({0x1a}), m_a2 = bytes_of({0x2a});
  world.transport(0).send(1, kB, m_b.data(), 1, &ignore, nullptr);
  world.run();
  EXPECT_EQ(cy.calls, 1);
  EXPECT_EQ(y, m_b);
  EXPECT_EQ(cx1.calls + cx2.calls, 0);
  world.transport(0).send(1, kA, m_a1.data(), 1, &ignore, nullptr);
  world.transport(0).send(1, kA, m_a2.data(), 1, &ignore, nullptr);
  world.run();
  EXPECT_EQ(x1, m_a1);
  EXPECT_EQ(x2, m_a2);
  EXPECT_LE(cx1.at, cx2.at);
  world.transport(1).recv(0, kB, z.data(), 1, &Completion::fn, &cz);
  const auto m_a3 = bytes_of({0x3a}), m_b2 = bytes_of({0x2b});
  world.transport(0).send(1, kA, m_a3.data(), 1, &ignore, nullptr);
  world.run();
  EXPECT_EQ(cz.calls, 0);  // A does not match B's receive: both wait
  const auto waiting = world.transport(1).probe(0, 0, 0);
  ASSERT_TRUE(waiting.has_value());
  EXPECT_EQ(waiting->tag, kA);
  world.transport(0).send(1, kB, m_b2.data(), 1, &ignore, nullptr);
  world.run();
  EXPECT_EQ(cz.calls, 1);
  EXPECT_EQ(z, m_b2);
  std::vector<std::byte> w(1);
  Completion cw{&world};
  world.transport(1).recv(0, kA, w.data(), 1, &Completion::fn, &cw);
  world.run();
  EXPECT_EQ(cw.calls, 1);
  EXPECT_EQ(w, m_a3);
  // A cancel names the receive by tag and context: B's receive is not A's.
  Completion cp{&world}, cq{&world};
  world.transport(1).recv(0, kB, nullptr, 0, &Completion::fn, &cp);
  world.transport(1).recv(0, kA, nullptr, 0, &Completion::fn, &cq);
  world.transport(1).cancel(0, kA, &cp, CancelMode::request);
  world.transport(1).cancel(0, kA, &cq, CancelMode::request);
  world.run();
  EXPECT_EQ(cp.calls, 0);
  EXPECT_EQ(cq.calls, 1);
  EXPECT_EQ(cq.status.code, Errc::cancelled);
  world.transport(0).send(1, kB, nullptr, 0, &ignore, nullptr);
  world.run();
  EXPECT_EQ(cp.calls, 1);
  EXPECT_TRUE(cp.status.ok);
  EXPECT_EQ(world.stats().messages_received, 12u);
  EXPECT_EQ(world.describe_pending(1), "nothing pending");
}

TEST(SimSemantics, TruncationFailsTheReceive) {
  SimWorld world(2, SimConfig{});
  auto data = bytes_of({1, 2, 3, 4});
  std::vector<std::byte> out(2);
  Completion got{&world}, sent{&world};
  world.transport(1).recv(0, 0, out.data(), 2, &Completion::fn, &got);
  world.transport(0).send(1, 0, data.data(), 4, &Completion::fn, &sent);
  world.run();
  EXPECT_FALSE(got.status.ok);
  EXPECT_EQ(got.status.code, Errc::truncated);
  EXPECT_EQ(got.status.length, 2u);
  EXPECT_EQ(out, bytes_of({1, 2}));
  EXPECT_TRUE(sent.status.ok);
}

TEST(SimSemantics, ProbeSeesUnmatchedMessagesByMask) {
  SimWorld world(3, SimConfig{});
  const Tag t1 = tag::make(1, 9, tag::Topology::none, 0x11, 3);
  const Tag t2 = tag::make(1, 9, tag::Topology::none, 0x22, 3);
  world.transport(2).send(0, t2, nullptr, 0, &ignore, nullptr);
  world.run();
  EXPECT_FALSE(world.transport(0).probe(2, t1, tag::kTagMask).has_value());
  auto p = world.transport(0).probe(-1, t1, tag::kTagMask & ~tag::kStampMask);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->source, 2);
  EXPECT_EQ(p->tag, t2);
  EXPECT_EQ(p->length, 0u);
  Completion got{&world};
  world.transport(0).recv(2, t2, nullptr, 0, &Completion::fn, &got);
  world.run();
  EXPECT_EQ(got.calls, 1);
  EXPECT_FALSE(world.transport(0).probe(-1, 0, 0).has_value());
}

TEST(SimSemantics, ActiveMessagesInOrderAndHeldUntilAHandlerExists) {
  SimWorld world(2, SimConfig{});
  for (int i = 0; i < 5; ++i) {
    auto p = bytes_of({i});
    world.transport(0).am_send(1, 42, p);  // copied at the call
  }
  world.run();
  std::vector<int> seen;
  world.transport(1).set_am_handler(42, [&](int source, std::span<const std::byte> payload) {
    EXPECT_EQ(source, 0);
    ASSERT_EQ(payload.size(), 1u);
    seen.push_back(static_cast<int>(payload[0]));
  });
  EXPECT_TRUE(seen.empty());  // delivered from the event loop
  world.run();
  EXPECT_EQ(seen, (std::vector<int>{0, 1, 2, 3, 4}));
  auto p = bytes_of({9});
  world.transport(0).am_send(1, 42, p);
  world.run();
  EXPECT_EQ(seen.back(), 9);
  EXPECT_EQ(world.stats().ams_delivered, 6u);
}

TEST(SimSemantics, DepartedPeerFailsReceivesAndSends) {
  SimWorld world(3, SimConfig{});
  Completion before{&world}, after{&world}, send{&world};
  world.transport(0).recv(2, 0, nullptr, 0, &Completion::fn, &before);
  world.fail(2, from_micros(50));
  world.run();
  EXPECT_EQ(before.calls, 1);
  EXPECT_EQ(before.status.code, Errc::peer_failed);
  EXPECT_EQ(before.at, from_micros(50));
  EXPECT_TRUE(world.failed(2));
  world.transport(0).recv(2, 1, nullptr, 0, &Completion::fn, &after);
  world.transport(1).send(2, 0, nullptr, 0, &Completion::fn, &send);
  world.run();
  EXPECT_EQ(after.status.code, Errc::peer_failed);
  EXPECT_FALSE(send.status.ok);
  EXPECT_EQ(send.status.code, Errc::peer_failed);
}

// cancel(): a posted receive completes with Errc::cancelled at the current
// virtual time (from the event loop, not inside cancel) and the message
// sent later waits for the next receive.
TEST(SimSemantics, CancelledReceiveCompletesAndIsNotMatched) {
  SimWorld world(2, SimConfig{});
  std::vector<std::byte> first(1, std::byte{0x55}), second(1);
  Completion c{&world}, n{&world};
  world.transport(1).recv(0, 3, first.data(), 1, &Completion::fn, &c);
  world.transport(1).recv(0, 3, second.data(), 1, &Completion::fn, &n);
  world.transport(1).cancel(0, 3, &c, CancelMode::request);
  EXPECT_EQ(c.calls, 0);
  world.run();
  EXPECT_EQ(c.calls, 1);
  EXPECT_EQ(c.status.code, Errc::cancelled);
  EXPECT_EQ(c.at, 0);
  const auto one = bytes_of({7});
  world.transport(0).send(1, 3, one.data(), 1, &ignore, nullptr);
  world.run();
  EXPECT_EQ(n.calls, 1);
  EXPECT_TRUE(n.status.ok);
  EXPECT_EQ(second, one);
  EXPECT_EQ(first[0], std::byte{0x55});
  EXPECT_EQ(c.calls, 1);
}

TEST(SimSemantics, BadPeersAndConfigurationsAreErrors) {
  EXPECT_THROW(SimWorld(0, SimConfig{}), Error);
  SimConfig bad;
  bad.threads = 0;
  EXPECT_THROW(SimWorld(2, bad), Error);
  SimConfig plogp;
  plogp.model = CostModel::plogp;
  EXPECT_THROW(SimWorld(2, plogp), Error);  // no table
  SimWorld world(2, SimConfig{});
  EXPECT_THROW(world.transport(0).send(2, 0, nullptr, 0, &ignore, nullptr), Error);
  EXPECT_THROW(world.transport(0).recv(-1, 0, nullptr, 0, &ignore, nullptr), Error);
  EXPECT_THROW(world.transport(0).send(1, 0, nullptr, 8, &ignore, nullptr), Error);  // real mode
}

TEST(SimSemantics, BlockAdvancesAnIdleClock) {
  SimWorld world(1, SimConfig{});
  world.transport(0).block(-1, std::chrono::microseconds(250));
  EXPECT_EQ(world.now(), from_micros(250));
  EXPECT_DOUBLE_EQ(world.transport(0).now(), 250e-6);
}

// A fixed pseudo-random traffic pattern over n ranks: every rank sends
// `per_rank` messages of assorted sizes to assorted peers and tags.
struct Traffic {
  struct Msg {
    int src, dst;
    Tag tag;
    size_t bytes;
  };
  std::vector<Msg> msgs;
  Traffic(int n, int per_rank) {
    uint64_t x = 12345;
    auto next = [&] {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      return x >> 33;
    };
    for (int s = 0; s < n; ++s)
      for (int i = 0; i < per_rank; ++i)
        msgs.push_back(Msg{s, static_cast<int>(next() % static_cast<uint64_t>(n)), next() % 3,
                           static_cast<size_t>(next() % 5000)});
  }
};

struct RunResult {
  std::vector<TraceRecord> trace;
  SimWorld::Stats stats;
  uint64_t received_bytes = 0;
  bool contents_ok = true;
  int completions = 0;
};

RunResult run_traffic(const Traffic& traffic, int n, SimConfig c) {
  SimWorld world(n, c);
  TraceVector trace;
  world.set_trace(&trace);
  std::vector<std::vector<std::byte>> out(traffic.msgs.size()), in(traffic.msgs.size());
  std::vector<Completion> done(traffic.msgs.size(), Completion{&world});
  for (size_t i = 0; i < traffic.msgs.size(); ++i) {
    const auto& m = traffic.msgs[i];
    out[i].assign(m.bytes, static_cast<std::byte>(m.bytes & 0xff));
    in[i].resize(m.bytes);
    world.transport(m.src).send(m.dst, m.tag, out[i].data(), m.bytes, &ignore, nullptr);
  }
  // Receives posted in the same per-(src, dst, tag) order as the sends.
  for (size_t i = 0; i < traffic.msgs.size(); ++i) {
    const auto& m = traffic.msgs[i];
    world.transport(m.dst).recv(m.src, m.tag, in[i].data(), m.bytes, &Completion::fn, &done[i]);
  }
  world.run();
  RunResult r;
  r.trace = trace.records;
  r.stats = world.stats();
  for (size_t i = 0; i < traffic.msgs.size(); ++i) {
    r.completions += done[i].calls;
    r.received_bytes += done[i].status.length;
    if (in[i] != out[i] || !done[i].status.ok) r.contents_ok = false;
  }
  return r;
}

TEST(SimSemantics, TwoRunsGiveIdenticalTraces) {
  const Traffic traffic(16, 20);
  SimConfig c;
  c.jitter = 0.5;
  c.seed = 7;
  c.threads = 3;
  c.ranks_per_node = 4;
  const RunResult a = run_traffic(traffic, 16, c);
  const RunResult b = run_traffic(traffic, 16, c);
  ASSERT_EQ(a.trace.size(), traffic.msgs.size());
  EXPECT_TRUE(a.trace == b.trace);
  EXPECT_EQ(a.stats.events, b.stats.events);
  c.seed = 8;  // another seed draws other jitter
  const RunResult other = run_traffic(traffic, 16, c);
  EXPECT_FALSE(a.trace == other.trace);
}

TEST(SimSemantics, EveryByteSentIsReceivedOnce) {
  const Traffic traffic(12, 30);
  SimConfig c;
  c.ranks_per_node = 3;
  c.threads = 2;
  const RunResult r = run_traffic(traffic, 12, c);
  const uint64_t sent = std::accumulate(traffic.msgs.begin(), traffic.msgs.end(), uint64_t{0},
                                        [](uint64_t s, const auto& m) { return s + m.bytes; });
  EXPECT_EQ(r.completions, static_cast<int>(traffic.msgs.size()));  // each exactly once
  EXPECT_EQ(r.stats.messages_sent, traffic.msgs.size());
  EXPECT_EQ(r.stats.messages_received, traffic.msgs.size());
  EXPECT_EQ(r.stats.bytes_sent, sent);
  EXPECT_EQ(r.stats.bytes_received, sent);
  EXPECT_EQ(r.received_bytes, sent);
  EXPECT_TRUE(r.contents_ok);
  uint64_t traced = 0;
  for (const auto& t : r.trace)
    traced += t.bytes;
  EXPECT_EQ(traced, sent);
}

TEST(SimSemantics, SizesModeMovesNoBytes) {
  SimConfig c;
  c.data = DataMode::sizes;
  SimWorld world(2, c);
  EXPECT_FALSE(world.transport(0).carries_payload());
}

}  // namespace
}  // namespace grove::sim
