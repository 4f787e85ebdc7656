// UCX transport, active messages between forked ranks: in-order delivery per
// pair, exact bytes for sizes from 0 to rendezvous-sized, the source rank,
// messages that arrive before their handler is registered, self-delivery.

#include <gtest/gtest.h>

#include <cstring>
#include <map>

#include "fork_ranks.hpp"
#include "transport/ucx/ucx_transport.hpp"

namespace grove::testing {
namespace {

constexpr int kMessages = 60;
constexpr uint16_t kEarlyId = 9;  // handler registered before anything is sent
constexpr uint16_t kLateId = 7;   // handler registered after every message was sent

// Message i of a stream: 4 bytes of sequence number, then a pattern. Every
// tenth is large enough for UCX's rendezvous protocol; some are empty.
size_t am_length(int i) {
  if (i % 10 == 5) return 300000;
  if (i % 7 == 0) return 0;
  return 4 + static_cast<size_t>(i) * 3;
}

std::vector<std::byte> am_payload(int source, int destination, uint16_t id, int i) {
  std::vector<std::byte> out = pattern(source, destination, id * 1000 + i, am_length(i));
  if (out.size() >= 4) std::memcpy(out.data(), &i, 4);
  return out;
}

// Checks each stream (source, id) arrives complete, in order, byte-exact.
struct AmChecker {
  int me = -1;
  std::map<std::pair<int, uint16_t>, int> next;  // expected message number
  int received = 0;

  void on_message(int source, uint16_t id, std::span<const std::byte> payload) {
    int& expected = next[{source, id}];
    const std::vector<std::byte> want = am_payload(source, me, id, expected);
    EXPECT_EQ(payload.size(), want.size())
        << "rank " << me << ": id " << id << " from " << source << " message " << expected;
    EXPECT_TRUE(payload.size() == want.size() &&
                std::equal(payload.begin(), payload.end(), want.begin()))
        << "rank " << me << ": id " << id << " from " << source << " message " << expected
        << " has wrong bytes (out of order?)";
    ++expected;
    ++received;
  }
};

void am_streams(ForkBootstrap& bootstrap) {
  auto transport = make_ucx_transport(bootstrap);
  const int me = transport->rank();
  const int n = transport->size();
  AmChecker checker;
  checker.me = me;
  transport->set_am_handler(kEarlyId, [&](int source, std::span<const std::byte> payload) {
    checker.on_message(source, kEarlyId, payload);
  });
  bootstrap.barrier();
  for (int i = 0; i < kMessages; ++i) {
    for (int peer = 0; peer < n; ++peer) {
      for (uint16_t id : {kEarlyId, kLateId}) {
        const std::vector<std::byte> payload = am_payload(me, peer, id, i);
        transport->am_send(peer, id, payload);  // copied: `payload` dies next line
      }
    }
    transport->progress();
  }
  // Let the early stream arrive; the late one is held until its handler
  // exists. Everyone has posted everything once the barrier passes.
  const int early_total = kMessages * n;
  ASSERT_TRUE(wait_for(*transport, [&] { return checker.received >= early_total; }))
      << "rank " << me << ": got " << checker.received << " of " << early_total;
  transport_barrier(*transport);
  transport->set_am_handler(kLateId, [&](int source, std::span<const std::byte> payload) {
    checker.on_message(source, kLateId, payload);
  });
  ASSERT_TRUE(wait_for(*transport, [&] { return checker.received >= 2 * early_total; }))
      << "rank " << me << ": got " << checker.received << " of " << 2 * early_total;
  for (int peer = 0; peer < n; ++peer) {
    EXPECT_EQ((checker.next[{peer, kEarlyId}]), kMessages);
    EXPECT_EQ((checker.next[{peer, kLateId}]), kMessages);
  }
  // Progress until every rank is done: a rendezvous we started needs our
  // progress until its receiver has pulled the data.
  transport_barrier(*transport);
}

TEST(UcxAm, StreamsArriveInOrderWithExactBytes) {
  for (int ranks = 1; ranks <= 4; ++ranks) {
    SCOPED_TRACE(ranks);
    const auto ends = run_ranks(ranks, am_streams);
    for (size_t r = 0; r < ends.size(); ++r) {
      EXPECT_TRUE(ends[r].code == 0 && ends[r].signal == 0 && !ends[r].timed_out)
          << "rank " << r << ": " << ends[r].describe();
    }
  }
}

// A handler may send, register handlers and progress from inside itself:
// rank 0 pings, rank 1's handler replies from within the handler, replacing
// itself on the way.
TEST(UcxAm, HandlersMaySendAndReRegister) {
  const auto ends = run_ranks(2, [](ForkBootstrap& bootstrap) {
    auto transport = make_ucx_transport(bootstrap);
    int pongs = 0;
    int pings = 0;
    transport->set_am_handler(2, [&](int source, std::span<const std::byte> payload) {
      ++pongs;
      EXPECT_EQ(source, 1);
      EXPECT_EQ(payload.size(), 3u);
    });
    transport->set_am_handler(1, [&](int source, std::span<const std::byte> payload) {
      ++pings;
      EXPECT_EQ(source, 0);
      const std::byte reply[3] = {std::byte{1}, std::byte{2}, std::byte{3}};
      transport->am_send(source, 2, reply);
      transport->progress();
      // Replace this very handler while it runs.
      transport->set_am_handler(1, [&](int, std::span<const std::byte> p) {
        ++pings;
        transport->am_send(0, 2, p.first(3));
      });
      EXPECT_EQ(payload.size(), 5u);
    });
    bootstrap.barrier();
    if (transport->rank() == 0) {
      const std::byte ping[5] = {};
      transport->am_send(1, 1, ping);
      transport->am_send(1, 1, ping);
      ASSERT_TRUE(wait_for(*transport, [&] { return pongs == 2; }));
    } else {
      ASSERT_TRUE(wait_for(*transport, [&] { return pings == 2; }));
    }
    transport_barrier(*transport);
  });
  for (size_t r = 0; r < ends.size(); ++r) {
    EXPECT_EQ(ends[r].code, 0) << "rank " << r << ": " << ends[r].describe();
  }
}

}  // namespace
}  // namespace grove::testing
