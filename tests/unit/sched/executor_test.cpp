#include "sched/executor.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

#include "support/memory_world.hpp"
#include "support/schedule_parts.hpp"

namespace grove::sched {
namespace {

const Tag kBase = tag::make(3, 17, tag::Topology::none, 42, 0);

bool all_done(const std::vector<std::unique_ptr<Execution>>& execs) {
  for (const auto& e : execs)
    if (!e->done()) return false;
  return true;
}

std::string error_text(const Execution& e) {
  return e.error() ? std::string(e.error()->what()) : std::string();
}

// Rank 0 sends its input to rank 1 through scratch; rank 1 transforms it
// locally and sends it back. Every step depends on the one before it.
TEST(Executor, FollowsDependenciesAcrossRanks) {
  for (auto mode : {MemoryWorld::SendMode::eager, MemoryWorld::SendMode::immediate,
                    MemoryWorld::SendMode::rendezvous}) {
    MemoryWorld world(2, {0, mode});
    Builder b0;
    b0.schedule().scratch_bytes = 8;
    auto c0 = b0.copy(in(0, 8), scratch(0, 8));
    auto s0 = b0.send(1, scratch(0, 8), {c0}, 1);
    b0.recv(1, out(0, 8), {s0}, 2);
    Builder b1;
    b1.schedule().scratch_bytes = 8;
    auto r1 = b1.recv(0, scratch(0, 8), {}, 1);
    auto c1 = b1.copy(scratch(0, 4), out(4, 4), {r1});
    auto c2 = b1.copy(scratch(4, 4), out(0, 4), {r1});
    b1.send(0, out(0, 8), {c1, c2}, 2);

    const char text[] = "abcdefgh";
    std::vector<std::byte> input(8), out0(8), out1(8);
    std::memcpy(input.data(), text, 8);
    std::vector<std::unique_ptr<Execution>> execs;
    execs.push_back(std::make_unique<Execution>(world.transport(0), share(b0, "pingpong"),
                                                Buffers{input.data(), 8, out0.data(), 8}, kBase));
    execs.push_back(std::make_unique<Execution>(world.transport(1), share(b1, "pingpong"),
                                                Buffers{nullptr, 0, out1.data(), 8}, kBase));
    for (auto& e : execs)
      e->start();
    world.run_until([&] { return all_done(execs); }, 100);
    for (auto& e : execs)
      EXPECT_FALSE(e->error()) << error_text(*e);
    EXPECT_EQ(std::memcmp(out0.data(), "efghabcd", 8), 0);
    EXPECT_EQ(std::memcmp(out1.data(), "efghabcd", 8), 0);
  }
}

TEST(Executor, HonoursInFlightLimits) {
  constexpr int kMessages = 100;
  for (auto mode : {MemoryWorld::SendMode::eager, MemoryWorld::SendMode::rendezvous}) {
    for (uint64_t seed : {0, 9}) {
      MemoryWorld world(2, {seed, mode});
      Builder sender, receiver;
      for (int i = 0; i < kMessages; ++i) {
        sender.send(1, in(i, 1), {}, static_cast<uint8_t>(i % 7));
        receiver.recv(0, out(i, 1), {}, static_cast<uint8_t>(i % 7));
      }
      sender.schedule().max_sends = 3;
      receiver.schedule().max_recvs = 2;
      std::vector<std::byte> input(kMessages), output(kMessages);
      for (int i = 0; i < kMessages; ++i)
        input[i] = static_cast<std::byte>(i * 7 + 1);
      std::vector<std::unique_ptr<Execution>> execs;
      execs.push_back(std::make_unique<Execution>(world.transport(0), share(sender, "many"),
                                                  Buffers{input.data(), kMessages}, kBase));
      execs.push_back(std::make_unique<Execution>(world.transport(1), share(receiver, "many"),
                                                  Buffers{nullptr, 0, output.data(), kMessages},
                                                  kBase));
      execs[1]->start();
      execs[0]->start();
      world.run_until([&] { return all_done(execs); }, 10000);
      EXPECT_FALSE(execs[0]->error()) << error_text(*execs[0]);
      EXPECT_FALSE(execs[1]->error()) << error_text(*execs[1]);
      EXPECT_EQ(input, output);
      EXPECT_EQ(world.stats(0).max_sends_in_flight, 3u);
      EXPECT_EQ(world.stats(1).max_recvs_in_flight, 2u);
    }
  }
}

// Every send completes inside Transport::send; a recursive executor would
// overflow the stack here.
TEST(Executor, ImmediateCompletionDoesNotRecurse) {
  constexpr int kMessages = 10000;
  MemoryWorld world(2, {0, MemoryWorld::SendMode::immediate});
  Builder sender, receiver;
  for (int i = 0; i < kMessages; ++i) {
    sender.send(1, in(i, 1));
    receiver.recv(0, out(i, 1));
  }
  std::vector<std::byte> input(kMessages), output(kMessages);
  for (int i = 0; i < kMessages; ++i)
    input[i] = static_cast<std::byte>(i % 251);
  Execution send_exec(world.transport(0), share(sender, "flat"), Buffers{input.data(), kMessages},
                      kBase);
  Execution recv_exec(world.transport(1), share(receiver, "flat"),
                      Buffers{nullptr, 0, output.data(), kMessages}, kBase);
  send_exec.start();
  EXPECT_TRUE(send_exec.done());  // everything completed inline
  world.progress_all();           // the messages arrive, unexpected
  recv_exec.start();
  EXPECT_TRUE(recv_exec.done());
  EXPECT_FALSE(send_exec.error());
  EXPECT_FALSE(recv_exec.error()) << error_text(recv_exec);
  EXPECT_EQ(input, output);
}

TEST(Executor, TruncationNamesPeerAndStep) {
  MemoryWorld world(2);
  Builder sender, receiver;
  sender.send(1, in(0, 8), {}, 5);
  receiver.copy(out(0, 0), out(0, 0));
  receiver.recv(0, out(0, 4), {}, 5);
  std::vector<std::byte> input(8), output(4);
  Execution s(world.transport(0), share(sender, "flat"), Buffers{input.data(), 8}, kBase);
  Execution r(world.transport(1), share(receiver, "flat"), Buffers{nullptr, 0, output.data(), 4},
              kBase);
  s.start();
  r.start();
  world.run_until([&] { return s.done() && r.done(); }, 100);
  ASSERT_TRUE(r.error().has_value());
  EXPECT_EQ(r.error()->code(), Errc::truncated);
  const std::string what = r.error()->what();
  EXPECT_NE(what.find("rank 1"), std::string::npos) << what;
  EXPECT_NE(what.find("step 1"), std::string::npos) << what;
  EXPECT_NE(what.find("peer 0"), std::string::npos) << what;
  EXPECT_NE(what.find("truncated"), std::string::npos) << what;
}

TEST(Executor, ShortMessageIsAMismatch) {
  MemoryWorld world(2);
  Builder sender, receiver;
  sender.send(1, in(0, 2));
  receiver.recv(0, out(0, 4));
  std::vector<std::byte> input(2), output(4);
  Execution s(world.transport(0), share(sender, "a"), Buffers{input.data(), 2}, kBase);
  Execution r(world.transport(1), share(receiver, "b"), Buffers{nullptr, 0, output.data(), 4},
              kBase);
  s.start();
  r.start();
  world.run_until([&] { return s.done() && r.done(); }, 100);
  ASSERT_TRUE(r.error().has_value());
  EXPECT_EQ(r.error()->code(), Errc::mismatch);
}

TEST(Executor, FailureStopsPosting) {
  MemoryWorld world(2);
  Builder receiver;
  auto first = receiver.recv(0, out(0, 1));
  receiver.send(0, out(0, 1), {first});
  std::vector<std::byte> output(1);
  Execution r(world.transport(1), share(receiver, "x"), Buffers{nullptr, 0, output.data(), 1},
              kBase);
  r.start();
  world.depart(0);
  world.run_until([&] { return r.done(); }, 100);
  ASSERT_TRUE(r.error().has_value());
  EXPECT_EQ(r.error()->code(), Errc::peer_failed);
  EXPECT_EQ(world.stats(1).sends_posted, 0u);
}

TEST(Executor, RegionsAreValidatedAtConstruction) {
  MemoryWorld world(2);
  std::vector<std::byte> buffer(16);
  auto expect_invalid = [&](Builder& b, Buffers buffers, std::string_view needle) {
    try {
      Execution e(world.transport(0), share(b, "checked"), buffers, kBase);
      ADD_FAILURE() << "accepted: " << needle;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::invalid_argument);
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  {
    Builder b;
    b.copy(in(0, 4), out(0, 4));
    b.send(1, out(10, 8));
    expect_invalid(b, Buffers{buffer.data(), 16, buffer.data(), 16}, "step 1");
  }
  {
    Builder b;
    b.recv(1, in(0, 4));
    expect_invalid(b, Buffers{buffer.data(), 16, buffer.data(), 16}, "read-only");
  }
  {
    Builder b;
    b.schedule().scratch_bytes = 4;
    b.copy(out(0, 8), scratch(0, 8));
    expect_invalid(b, Buffers{nullptr, 0, buffer.data(), 16}, "scratch");
  }
  {
    Builder b;
    b.send(2, out(0, 1));
    expect_invalid(b, Buffers{nullptr, 0, buffer.data(), 16}, "peer 2");
  }
  {
    Builder b;
    b.send(1, in(0, 1));
    expect_invalid(b, Buffers{nullptr, 16, buffer.data(), 16}, "null");
  }
  {
    Builder b;
    b.schedule().dtype = Datatype::int32;
    b.reduce(out(0, 6), out(8, 6));
    expect_invalid(b, Buffers{nullptr, 0, buffer.data(), 16}, "int32");
  }
}

TEST(Executor, ReduceStepsUseTheScheduleOperation) {
  MemoryWorld world(2);
  Builder b0, b1;
  b0.send(1, in(0, 16));
  b1.schedule().scratch_bytes = 16;
  b1.schedule().dtype = Datatype::int32;
  b1.schedule().op = ReduceOp::sum;
  auto r = b1.recv(0, scratch(0, 16));
  b1.copy(in(0, 16), out(0, 16));
  b1.reduce(scratch(0, 16), out(0, 16), {r, 1});
  std::vector<int32_t> a{1, 2, 3, 4}, c{10, 20, 30, 40}, result(4);
  Execution e0(world.transport(0), share(b0, "r"),
               Buffers{reinterpret_cast<std::byte*>(a.data()), 16}, kBase);
  Execution e1(world.transport(1), share(b1, "r"),
               Buffers{reinterpret_cast<std::byte*>(c.data()), 16,
                       reinterpret_cast<std::byte*>(result.data()), 16},
               kBase);
  e0.start();
  e1.start();
  world.run_until([&] { return e0.done() && e1.done(); }, 100);
  EXPECT_FALSE(e1.error()) << error_text(e1);
  EXPECT_EQ(result, (std::vector<int32_t>{11, 22, 33, 44}));
}

TEST(Executor, DescribePendingNamesWhatItWaitsFor) {
  MemoryWorld world(2);
  Builder b;
  auto r = b.recv(0, out(0, 4), {}, 3);
  b.send(0, out(0, 4), {r});
  std::vector<std::byte> output(4);
  Execution e(world.transport(1), share(b, "knomial:4"), Buffers{nullptr, 0, output.data(), 4},
              kBase);
  EXPECT_NE(e.describe_pending().find("not started"), std::string::npos);
  e.start();
  world.progress_all();
  EXPECT_FALSE(e.done());
  const std::string text = e.describe_pending();
  EXPECT_NE(text.find("rank 1 knomial:4"), std::string::npos) << text;
  EXPECT_NE(text.find("recv from 0 on channel 3"), std::string::npos) << text;
  EXPECT_NE(text.find("1 waiting on dependencies"), std::string::npos) << text;
}

TEST(Executor, EmptyScheduleCompletesAtStart) {
  MemoryWorld world(1);
  Builder b;
  Execution e(world.transport(0), share(b, "none"), Buffers{}, kBase);
  EXPECT_FALSE(e.done());
  e.start();
  EXPECT_TRUE(e.done());
  EXPECT_FALSE(e.error());
}

// A sizes-only transport: buffers are null, lengths are still checked and
// honoured, copy and reduce steps only keep the order.
TEST(Executor, RunsWithoutPayload) {
  MemoryWorld world(2, {0, MemoryWorld::SendMode::eager, false});
  Builder b0, b1;
  b0.schedule().scratch_bytes = 1 << 30;  // never allocated
  auto c = b0.copy(out(0, 64), scratch(0, 64));
  b0.send(1, scratch(0, 64), {c});
  b1.schedule().dtype = Datatype::float64;
  auto r = b1.recv(0, out(0, 64));
  b1.reduce(out(0, 64), out(64, 64), {r});
  Execution e0(world.transport(0), share(b0, "sizes"), Buffers{nullptr, 0, nullptr, 64}, kBase);
  Execution e1(world.transport(1), share(b1, "sizes"), Buffers{nullptr, 0, nullptr, 128}, kBase);
  e0.start();
  e1.start();
  world.run_until([&] { return e0.done() && e1.done(); }, 100);
  EXPECT_FALSE(e0.error()) << error_text(e0);
  EXPECT_FALSE(e1.error()) << error_text(e1);
  Builder too_long;
  too_long.send(1, out(0, 65));
  EXPECT_THROW(Execution(world.transport(0), share(too_long, "sizes"),
                         Buffers{nullptr, 0, nullptr, 64}, kBase),
               Error);
}

// Destroying an execution with a receive still posted must not leave the
// transport with a dangling completion context.
TEST(Executor, DestroyedWithMessagesInFlight) {
  MemoryWorld world(2);
  std::vector<std::byte> output(4), input(4);
  {
    Builder b;
    b.recv(0, out(0, 4));
    Execution e(world.transport(1), share(b, "orphan"), Buffers{nullptr, 0, output.data(), 4},
                kBase);
    e.start();
  }
  Builder s;
  s.send(1, in(0, 4));
  Execution e(world.transport(0), share(s, "sender"), Buffers{input.data(), 4}, kBase);
  e.start();
  world.run_until([&] { return e.done() && world.quiescent(); }, 100);
  EXPECT_FALSE(e.error());
}

// notify_when_done: called once, from the completion that ends the
// execution, with done() true and every step finished (or the error set);
// the callback may destroy the execution; an execution already done when
// asked is not notified.
TEST(Executor, NotifiesOnceWhenDone) {
  struct Notice {
    std::unique_ptr<Execution>* slot = nullptr;
    int calls = 0;
    bool done_then = false;
    bool error_then = false;
    static void fn(void* context) {
      auto* n = static_cast<Notice*>(context);
      n->calls++;
      n->done_then = (*n->slot)->done();
      n->error_then = (*n->slot)->error().has_value();
      n->slot->reset();  // destroyed from its own completion
    }
  };
  for (auto mode : {MemoryWorld::SendMode::eager, MemoryWorld::SendMode::immediate,
                    MemoryWorld::SendMode::rendezvous}) {
    MemoryWorld world(2, {0, mode});
    Builder b0, b1;
    b0.schedule().scratch_bytes = 4;
    auto s0 = b0.send(1, in(0, 4), {}, 1);
    auto r0 = b0.recv(1, scratch(0, 4), {s0}, 2);
    b0.copy(scratch(0, 4), out(0, 4), {r0});
    auto r1 = b1.recv(0, out(0, 4), {}, 1);
    b1.send(0, out(0, 4), {r1}, 2);
    std::vector<std::byte> input(4, std::byte{7}), out0(4), out1(4);
    std::unique_ptr<Execution> e0 = std::make_unique<Execution>(
        world.transport(0), share(b0, "echo"), Buffers{input.data(), 4, out0.data(), 4}, kBase);
    std::unique_ptr<Execution> e1 = std::make_unique<Execution>(
        world.transport(1), share(b1, "echo"), Buffers{nullptr, 0, out1.data(), 4}, kBase);
    Notice n0{&e0}, n1{&e1};
    e0->notify_when_done(&Notice::fn, &n0);
    e1->notify_when_done(&Notice::fn, &n1);
    e1->start();
    e0->start();
    world.run_until([&] { return !e0 && !e1; }, 100);
    EXPECT_EQ(n0.calls, 1);
    EXPECT_EQ(n1.calls, 1);
    EXPECT_TRUE(n0.done_then && n1.done_then);
    EXPECT_FALSE(n0.error_then || n1.error_then);
    EXPECT_EQ(out0, input);
    EXPECT_EQ(out1, input);
  }
  // A failed execution is notified too, with its error.
  MemoryWorld world(2);
  Builder sender, receiver;
  sender.send(1, in(0, 2));
  receiver.recv(0, out(0, 4));
  std::vector<std::byte> input(2), output(4);
  Execution s(world.transport(0), share(sender, "a"), Buffers{input.data(), 2}, kBase);
  std::unique_ptr<Execution> r = std::make_unique<Execution>(
      world.transport(1), share(receiver, "b"), Buffers{nullptr, 0, output.data(), 4}, kBase);
  Notice failed{&r};
  r->notify_when_done(&Notice::fn, &failed);
  s.start();
  r->start();
  world.run_until([&] { return s.done() && !r; }, 100);
  EXPECT_EQ(failed.calls, 1);
  EXPECT_TRUE(failed.done_then);
  EXPECT_TRUE(failed.error_then);
  // Done at start, then asked: not notified.
  Builder empty;
  Execution e(world.transport(0), share(empty, "none"), Buffers{}, kBase);
  e.start();
  int late = 0;
  e.notify_when_done([](void* c) { ++*static_cast<int*>(c); }, &late);
  EXPECT_TRUE(e.done());
  EXPECT_EQ(late, 0);
}

}  // namespace
}  // namespace grove::sched
