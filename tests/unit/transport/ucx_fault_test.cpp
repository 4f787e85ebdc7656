// UCX transport, a peer that dies: receives posted to it (before and after
// its death) and sends to it complete with peer_failed, within the harness's
// bound; survivors keep talking to each other; tear-down does not hang.
//
// Detection over shared memory relies on UCX's keepalive (which checks that
// the peer process still exists) every ucx_keepalive_ms, run from progress();
// a worker asleep in block() is woken for it by UCX's keepalive timer fd.
// Over TCP the broken connection is seen at once.

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>

#include "core/params.hpp"
#include "fork_ranks.hpp"
#include "transport/ucx/ucx_transport.hpp"

namespace grove::testing {
namespace {

constexpr int kVictim = 1;

Tag fault_tag(uint32_t sequence) {
  return tag::make(2, sequence, tag::Topology::none, 0, 0);
}

void survive_a_death(ForkBootstrap& bootstrap) {
  params::ScopedSet keepalive("ucx_keepalive_ms", "200");
  auto transport = make_ucx_transport(bootstrap);
  const int me = transport->rank();
  const int n = transport->size();

  // A message the victim sends before dying must still be receivable.
  if (me == kVictim) {
    std::vector<Completed> sent(static_cast<size_t>(n));
    std::vector<std::vector<std::byte>> words(static_cast<size_t>(n));
    for (int peer = 0; peer < n; ++peer) {
      words[static_cast<size_t>(peer)] = pattern(kVictim, peer, 0, 64);
      transport->send(peer, fault_tag(1), words[static_cast<size_t>(peer)].data(), 64,
                      &Completed::fn, &sent[static_cast<size_t>(peer)]);
    }
    ASSERT_TRUE(wait_for(*transport, [&] {
      for (const Completed& c : sent)
        if (c.count == 0) return false;
      return true;
    }));
    // Die only once every survivor has posted its receive.
    std::vector<Completed> ready(static_cast<size_t>(n));
    std::byte unused{};
    for (int peer = 0; peer < n; ++peer) {
      if (peer != kVictim) {
        transport->recv(peer, fault_tag(9), &unused, 0, &Completed::fn,
                        &ready[static_cast<size_t>(peer)]);
      }
    }
    ASSERT_TRUE(wait_for(*transport, [&] {
      for (int peer = 0; peer < n; ++peer)
        if (peer != kVictim && ready[static_cast<size_t>(peer)].count == 0) return false;
      return true;
    }));
    ::kill(::getpid(), SIGKILL);
  }

  // Posted before the death (the victim waits for our "ready"), never
  // satisfied. No bootstrap barrier: a rank parked there does not progress,
  // and over TCP the victim's sends need our progress.
  std::vector<std::byte> never(128);
  Completed before;
  transport->recv(kVictim, fault_tag(2), never.data(), never.size(), &Completed::fn, &before);
  Completed ready;
  std::byte unused{};
  transport->send(kVictim, fault_tag(9), &unused, 0, &Completed::fn, &ready);

  // Sleeping in block() with no bound but the test's: UCX's keepalive timer
  // fd must wake the worker for the death to be noticed.
  ASSERT_TRUE(wait_blocking(*transport, [&] { return before.count == 1; }))
      << "rank " << me << ": the receive from the dead rank did not complete";
  EXPECT_FALSE(before.status.ok);
  EXPECT_EQ(before.status.code, Errc::peer_failed);

  // Posted after the failure is known: the unexpected message sent before the
  // death still matches; a new one fails.
  std::vector<std::byte> got(64);
  Completed early_message;
  transport->recv(kVictim, fault_tag(1), got.data(), got.size(), &Completed::fn, &early_message);
  Completed after;
  transport->recv(kVictim, fault_tag(3), never.data(), never.size(), &Completed::fn, &after);
  ASSERT_TRUE(wait_for(*transport, [&] { return early_message.count == 1 && after.count == 1; }));
  EXPECT_TRUE(early_message.status.ok);
  EXPECT_TRUE(got == pattern(kVictim, me, 0, 64));
  EXPECT_EQ(after.status.code, Errc::peer_failed);

  // Sends to the dead rank, eager and rendezvous, fail; AMs are dropped.
  std::vector<std::byte> big(size_t{1} << 20);
  Completed small_send, big_send;
  transport->send(kVictim, fault_tag(4), big.data(), 10, &Completed::fn, &small_send);
  transport->send(kVictim, fault_tag(5), big.data(), big.size(), &Completed::fn, &big_send);
  transport->am_send(kVictim, 3, std::span<const std::byte>(big.data(), 10));
  ASSERT_TRUE(wait_for(*transport, [&] { return small_send.count == 1 && big_send.count == 1; }));
  EXPECT_EQ(small_send.status.code, Errc::peer_failed);
  EXPECT_EQ(big_send.status.code, Errc::peer_failed);

  // Survivors still talk: a ring among the ranks other than the victim.
  std::vector<int> alive;
  for (int r = 0; r < n; ++r)
    if (r != kVictim) alive.push_back(r);
  const size_t at = static_cast<size_t>(std::find(alive.begin(), alive.end(), me) - alive.begin());
  const int next = alive[(at + 1) % alive.size()];
  const int prev = alive[(at + alive.size() - 1) % alive.size()];
  std::vector<std::byte> out = pattern(me, next, 6, 100000), in(100000);
  Completed ring_send, ring_recv;
  transport->recv(prev, fault_tag(6), in.data(), in.size(), &Completed::fn, &ring_recv);
  transport->send(next, fault_tag(6), out.data(), out.size(), &Completed::fn, &ring_send);
  ASSERT_TRUE(wait_for(*transport, [&] { return ring_send.count == 1 && ring_recv.count == 1; }));
  EXPECT_TRUE(ring_send.status.ok);
  EXPECT_TRUE(ring_recv.status.ok);
  EXPECT_TRUE(in == pattern(prev, me, 6, 100000));
  // No bootstrap barrier here: the harness's relay needs every rank.
}

TEST(UcxFault, DeadPeerFailsItsOperations) {
  for (int ranks : {2, 3}) {
    SCOPED_TRACE(ranks);
    const auto ends = run_ranks(ranks, survive_a_death, std::chrono::seconds(60));
    ASSERT_EQ(ends.size(), static_cast<size_t>(ranks));
    for (int r = 0; r < ranks; ++r) {
      const ChildEnd& end = ends[static_cast<size_t>(r)];
      if (r == kVictim) {
        EXPECT_EQ(end.signal, SIGKILL) << "victim: " << end.describe();
      } else {
        EXPECT_TRUE(end.code == 0 && end.signal == 0 && !end.timed_out)
            << "rank " << r << ": " << end.describe();
      }
    }
  }
}

// Same over TCP only (UCX picks shared memory on one node by default).
TEST(UcxFault, DeadPeerOverTcp) {
  const auto ends = run_ranks(
      3,
      [](ForkBootstrap& bootstrap) {
        params::ScopedSet tls("ucx_tls", "tcp,self");
        survive_a_death(bootstrap);
      },
      std::chrono::seconds(60));
  for (int r = 0; r < 3; ++r) {
    const ChildEnd& end = ends[static_cast<size_t>(r)];
    if (r == kVictim) {
      EXPECT_EQ(end.signal, SIGKILL) << "victim: " << end.describe();
    } else {
      EXPECT_TRUE(end.code == 0 && end.signal == 0 && !end.timed_out)
          << "rank " << r << ": " << end.describe();
    }
  }
}

// Tear-down is bounded even when a live peer never takes what was sent to
// it: rank 0 leaves a rendezvous send and an active message unfinished to
// rank 1, which sits in the bootstrap (not progressing) until rank 0 is done.
TEST(UcxFault, CloseIsBoundedWithUnfinishedSends) {
  const auto ends = run_ranks(2, [](ForkBootstrap& bootstrap) {
    params::ScopedSet close_timeout("ucx_close_timeout_ms", "300");
    auto transport = make_ucx_transport(bootstrap);
    bootstrap.barrier();
    if (transport->rank() == 0) {
      std::vector<std::byte> big(size_t{4} << 20);
      Completed sent;
      transport->send(1, fault_tag(1), big.data(), big.size(), &Completed::fn, &sent);
      transport->am_send(1, 5, std::span<const std::byte>(big.data(), big.size()));
      transport->progress();
      transport.reset();  // must return: flush bounded, then force close
      EXPECT_EQ(sent.count, 0) << "a dropped completion ran during destruction";
      bootstrap.barrier();
    } else {
      bootstrap.barrier();  // rank 0 has destroyed its transport
      // The unexpected rendezvous from a closed peer must not hang our exit.
      transport->progress();
      transport.reset();
    }
  });
  for (size_t r = 0; r < ends.size(); ++r) {
    EXPECT_TRUE(ends[r].code == 0 && ends[r].signal == 0 && !ends[r].timed_out)
        << "rank " << r << ": " << ends[r].describe();
  }
}

}  // namespace
}  // namespace grove::testing
