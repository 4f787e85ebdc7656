// UCX transport, cancellation (Transport::cancel) between forked ranks: a
// cancelled receive completes with Errc::cancelled from progress() and is
// not matched afterwards (the message goes to the next receive, the
// cancelled buffer stays as it was); a rendezvous send its receiver never
// takes ends with fail_peer, as do the peer's receives.

#include <gtest/gtest.h>

#include <vector>

#include "core/params.hpp"
#include "fork_ranks.hpp"
#include "transport/ucx/ucx_transport.hpp"

namespace grove::testing {
namespace {

Tag cancel_tag(uint32_t sequence) {
  return tag::make(1, sequence, tag::Topology::none, 0, 0);
}

TEST(UcxCancel, CancelledReceiveIsNotMatchedLater) {
  expect_all_exited_zero(run_ranks(2, [](ForkBootstrap& bootstrap) {
    auto transport = make_ucx_transport(bootstrap);
    const std::vector<std::byte> message = pattern(0, 1, 1, 4096);
    if (transport->rank() == 1) {
      std::vector<std::byte> cancelled(4096, std::byte{0xA5}), next(4096);
      Completed first, second;
      transport->recv(0, cancel_tag(1), cancelled.data(), cancelled.size(), &Completed::fn, &first);
      transport->cancel(0, cancel_tag(1), &first, CancelMode::request);
      EXPECT_EQ(first.count, 0) << "completion ran inside cancel()";
      ASSERT_TRUE(wait_for(*transport, [&] { return first.count == 1; }));
      EXPECT_EQ(first.status.code, Errc::cancelled);
      bootstrap.barrier();  // rank 0 sends now
      transport->recv(0, cancel_tag(1), next.data(), next.size(), &Completed::fn, &second);
      ASSERT_TRUE(wait_for(*transport, [&] { return second.count == 1; }));
      EXPECT_TRUE(second.status.ok);
      EXPECT_EQ(next, message);
      EXPECT_EQ(cancelled, std::vector<std::byte>(4096, std::byte{0xA5}));
      EXPECT_EQ(first.count, 1);
    } else {
      bootstrap.barrier();
      Completed sent;
      transport->send(1, cancel_tag(1), message.data(), message.size(), &Completed::fn, &sent);
      ASSERT_TRUE(wait_for(*transport, [&] { return sent.count == 1; }));
      EXPECT_TRUE(sent.status.ok);
    }
    transport_barrier(*transport);
  }));
}

// Rank 0 sends 4 MiB (a rendezvous) that rank 1 never receives: a request
// does not stop it (UCX cannot cancel a send); fail_peer ends it, and the
// peer's receives, and later sends to it fail at once.
TEST(UcxCancel, FailPeerEndsASendItsReceiverNeverTakes) {
  expect_all_exited_zero(run_ranks(2, [](ForkBootstrap& bootstrap) {
    params::ScopedSet close_timeout("ucx_close_timeout_ms", "300");
    auto transport = make_ucx_transport(bootstrap);
    if (transport->rank() == 0) {
      std::vector<std::byte> big(size_t{4} << 20, std::byte{1});
      std::vector<std::byte> in(8);
      Completed sent, received, later;
      transport->recv(1, cancel_tag(3), in.data(), in.size(), &Completed::fn, &received);
      transport->send(1, cancel_tag(2), big.data(), big.size(), &Completed::fn, &sent);
      transport->cancel(1, cancel_tag(2), &sent, CancelMode::request);
      EXPECT_FALSE(wait_for(
          *transport, [&] { return sent.count == 1; }, std::chrono::milliseconds(200)));
      transport->cancel(1, cancel_tag(2), &sent, CancelMode::fail_peer);
      ASSERT_TRUE(wait_for(*transport, [&] { return sent.count == 1 && received.count == 1; }));
      EXPECT_FALSE(sent.status.ok);
      EXPECT_EQ(received.status.code, Errc::peer_failed);
      transport->send(1, cancel_tag(4), big.data(), 8, &Completed::fn, &later);
      ASSERT_TRUE(wait_for(*transport, [&] { return later.count == 1; }));
      EXPECT_EQ(later.status.code, Errc::peer_failed);
    }
    bootstrap.barrier();
  }));
}

}  // namespace
}  // namespace grove::testing
