// Execution::abort and the destructor: every message in flight is cancelled
// and reported before the call returns, so nothing is written into a
// buffer afterwards (sched/executor.hpp); escalation to fail_peer only for
// what a request did not end, at once for departed peers.

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/params.hpp"
#include "sched/executor.hpp"
#include "support/memory_world.hpp"
#include "support/schedule_parts.hpp"
#include "transport/forwarding.hpp"

namespace grove::sched {
namespace {

const Tag kAbortBase = tag::make(3, 17, tag::Topology::none, 42, 0);
constexpr std::byte kCanary{0xA5};

bool untouched(const std::vector<std::byte>& buffer) {
  for (std::byte b : buffer)
    if (b != kCanary) return false;
  return true;
}

// Rank 0 sends 8 bytes to rank 1 on channel 0 of kAbortBase (as rank 0 of the
// schedules below would).
void send_late(MemoryWorld& world, const std::vector<std::byte>& data) {
  Builder s;
  s.send(1, in(0, data.size()));
  Execution sender(world.transport(0), share(s, "late"), Buffers{data.data(), data.size()},
                   kAbortBase);
  sender.start();
  world.run_until([&] { return sender.done(); }, 100);
  ASSERT_FALSE(sender.error());
  for (int i = 0; i < 4; ++i)
    world.progress_all();
}

// A timed-out receive: after abort() returns, the receive is gone, and the
// message that arrives later is not written into the buffer.
TEST(ExecutorAbort, ALateMessageLeavesTheBufferAlone) {
  MemoryWorld world(2);
  std::vector<std::byte> output(8, kCanary);
  Builder b;
  b.recv(0, out(0, 8));
  Execution e(world.transport(1), share(b, "bcast"), Buffers{nullptr, 0, output.data(), 8},
              kAbortBase);
  e.start();
  world.progress_all();
  ASSERT_FALSE(e.done());
  EXPECT_EQ(e.abort(Error(Errc::timeout, "bcast: timed out")), 0u);
  ASSERT_TRUE(e.done());
  EXPECT_EQ(e.error()->code(), Errc::timeout);
  EXPECT_STREQ(e.error()->what(), "bcast: timed out");
  EXPECT_EQ(world.stats(1).recvs_in_flight, 0u);
  send_late(world, std::vector<std::byte>(8, std::byte{1}));
  EXPECT_TRUE(untouched(output));
}

// Destroying an execution with a receive posted aborts it: the receive is
// reported before the destructor returns, and a late message stays out.
TEST(ExecutorAbort, DestroyingCancelsWhatIsInFlight) {
  MemoryWorld world(2);
  std::vector<std::byte> output(8, kCanary);
  {
    Builder b;
    b.recv(0, out(0, 8));
    Execution e(world.transport(1), share(b, "dropped"), Buffers{nullptr, 0, output.data(), 8},
                kAbortBase);
    e.start();
  }
  EXPECT_EQ(world.stats(1).recvs_in_flight, 0u);
  send_late(world, std::vector<std::byte>(8, std::byte{2}));
  EXPECT_TRUE(untouched(output));
}

// A rendezvous send (its bytes are read when the receiver matches it) is
// taken back too.
TEST(ExecutorAbort, CancelsSendsTheReceiverHasNotTaken) {
  MemoryWorld world(2, {0, MemoryWorld::SendMode::rendezvous});
  std::vector<std::byte> input(8, std::byte{3});
  Builder s;
  s.send(1, in(0, 8));
  Execution e(world.transport(0), share(s, "scatter"), Buffers{input.data(), 8}, kAbortBase);
  e.start();
  world.progress_all();
  EXPECT_EQ(e.abort(Error(Errc::timeout, "scatter: timed out")), 0u);
  EXPECT_EQ(world.stats(0).sends_in_flight, 0u);
  // The receiver finds nothing to receive.
  std::vector<std::byte> output(8, kCanary);
  Builder r;
  r.recv(0, out(0, 8));
  Execution receiver(world.transport(1), share(r, "scatter"), Buffers{nullptr, 0, output.data(), 8},
                     kAbortBase);
  receiver.start();
  for (int i = 0; i < 4; ++i)
    world.progress_all();
  EXPECT_FALSE(receiver.done());
  EXPECT_TRUE(untouched(output));
}

// A failed message leaves its siblings in flight; abort cancels them and
// keeps the first error.
TEST(ExecutorAbort, AfterAFailureTheSiblingsAreCancelled) {
  MemoryWorld world(3);
  std::vector<std::byte> output(16, kCanary);
  Builder b;
  b.recv(0, out(0, 8));
  b.recv(2, out(8, 8));
  Execution e(world.transport(1), share(b, "gather"), Buffers{nullptr, 0, output.data(), 16},
              kAbortBase);
  e.start();
  world.depart(0);
  world.run_until([&] { return e.done(); }, 100);
  ASSERT_EQ(e.error()->code(), Errc::peer_failed);
  EXPECT_EQ(world.stats(1).recvs_in_flight, 1u);  // the one from rank 2
  EXPECT_EQ(e.abort(Error(Errc::timeout, "unused")), 0u);
  EXPECT_EQ(e.error()->code(), Errc::peer_failed);
  EXPECT_EQ(world.stats(1).recvs_in_flight, 0u);
}

// A transport that records cancellations and ends an operation only when
// the mode it honours comes (fail_peer here, as UCX for a send under way).
class StubbornTransport final : public ForwardingTransport {
 public:
  StubbornTransport(Transport& inner, bool honour_fail_peer)
      : ForwardingTransport(inner), honour_fail_peer_(honour_fail_peer) {}
  void cancel(int peer, Tag tag, void* context, CancelMode mode) override {
    calls.push_back({peer, mode});
    if (mode == CancelMode::fail_peer && honour_fail_peer_)
      inner().cancel(peer, tag, context, CancelMode::request);
  }
  struct Call {
    int peer;
    CancelMode mode;
  };
  std::vector<Call> calls;

 private:
  bool honour_fail_peer_;
};

TEST(ExecutorAbort, EscalatesToFailPeerOnlyForWhatARequestDidNotEnd) {
  params::ScopedSet wait("cancel_wait_ms", "20");
  params::ScopedSet policy("wait_policy", "block");
  MemoryWorld world(2);
  StubbornTransport stubborn(world.transport(1), true);
  std::vector<std::byte> output(8, kCanary);
  Builder b;
  b.recv(0, out(0, 8));
  Execution e(stubborn, share(b, "bcast"), Buffers{nullptr, 0, output.data(), 8}, kAbortBase);
  e.start();
  EXPECT_EQ(e.abort(Error(Errc::timeout, "t")), 0u);
  ASSERT_EQ(stubborn.calls.size(), 2u);
  EXPECT_EQ(stubborn.calls[0].peer, 0);
  EXPECT_EQ(stubborn.calls[0].mode, CancelMode::request);
  EXPECT_EQ(stubborn.calls[1].peer, 0);
  EXPECT_EQ(stubborn.calls[1].mode, CancelMode::fail_peer);
}

TEST(ExecutorAbort, DepartedPeersAreFailedAtOnce) {
  MemoryWorld world(3);
  StubbornTransport stubborn(world.transport(1), true);
  std::vector<std::byte> output(16, kCanary);
  Builder b;
  b.recv(0, out(0, 8));
  b.recv(2, out(8, 8));
  Execution e(stubborn, share(b, "gather"), Buffers{nullptr, 0, output.data(), 16}, kAbortBase);
  e.start();
  // Rank 2 is gone: fail_peer for it in the first pass; rank 0's receive
  // gets a request (ignored by this transport), then fail_peer.
  params::ScopedSet wait("cancel_wait_ms", "20");
  EXPECT_EQ(
      e.abort(Error(Errc::peer_failed, "rank 2 departed"), [](int peer) { return peer == 2; }), 0u);
  ASSERT_GE(stubborn.calls.size(), 2u);
  EXPECT_EQ(stubborn.calls[0].peer, 0);
  EXPECT_EQ(stubborn.calls[0].mode, CancelMode::request);
  EXPECT_EQ(stubborn.calls[1].peer, 2);
  EXPECT_EQ(stubborn.calls[1].mode, CancelMode::fail_peer);
}

// When even fail_peer does not end a message, abort says how many are left
// (bounded: 2 x cancel_wait_ms), and the state outlives the execution until
// the transport reports it.
TEST(ExecutorAbort, ReportsWhatTheTransportCouldNotEnd) {
  params::ScopedSet wait("cancel_wait_ms", "5");
  MemoryWorld world(2);
  StubbornTransport deaf(world.transport(1), false);
  std::vector<std::byte> output(8, kCanary);
  {
    Builder b;
    b.recv(0, out(0, 8));
    Execution e(deaf, share(b, "bcast"), Buffers{nullptr, 0, output.data(), 8}, kAbortBase);
    e.start();
    EXPECT_EQ(e.abort(Error(Errc::timeout, "t")), 1u);
    EXPECT_EQ(e.error()->code(), Errc::timeout);
  }
  // The message still lands (the buffer was still in use, as abort said),
  // and completing it frees the orphaned state (no leak).
  send_late(world, std::vector<std::byte>(8, std::byte{4}));
  EXPECT_EQ(output[0], std::byte{4});
  EXPECT_EQ(world.stats(1).recvs_in_flight, 0u);
}

}  // namespace
}  // namespace grove::sched
