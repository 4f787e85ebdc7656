// UCX transport, tagged messages between forked ranks (K = 1..4): sizes,
// posting order, same-tag ordering, truncation, probe, block() wake-ups.

#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <array>
#include <memory>
#include <thread>

#include "fork_ranks.hpp"
#include "transport/ucx/ucx_transport.hpp"

namespace grove::testing {
namespace {

constexpr std::array<size_t, 5> kSizes = {0, 1, 7, 4096, (size_t{1} << 20) + 3};

Tag p2p_tag(uint32_t sequence, uint32_t stamp = 0, uint32_t channel = 0) {
  return tag::make(1, sequence, tag::Topology::none, stamp, channel);
}

// Every rank sends every size to every rank (itself included), with the
// receives posted before the sends (recv_first) or after every send was
// posted and a barrier passed.
void exchange_all_sizes(ForkBootstrap& bootstrap, bool recv_first) {
  auto transport = make_ucx_transport(bootstrap);
  const int me = transport->rank();
  const int n = transport->size();
  const size_t cases = kSizes.size();
  std::vector<std::vector<std::byte>> out(static_cast<size_t>(n) * cases);
  std::vector<std::vector<std::byte>> in(out.size());
  std::vector<Completed> sent(out.size());
  std::vector<Completed> received(out.size());

  auto post_recvs = [&] {
    for (int peer = 0; peer < n; ++peer) {
      for (size_t c = 0; c < cases; ++c) {
        const size_t i = static_cast<size_t>(peer) * cases + c;
        in[i].assign(kSizes[c], std::byte{0xEE});
        transport->recv(peer, p2p_tag(static_cast<uint32_t>(c)), in[i].data(), in[i].size(),
                        &Completed::fn, &received[i]);
      }
    }
  };
  auto post_sends = [&] {
    for (int peer = 0; peer < n; ++peer) {
      for (size_t c = 0; c < cases; ++c) {
        const size_t i = static_cast<size_t>(peer) * cases + c;
        out[i] = pattern(me, peer, static_cast<int>(c), kSizes[c]);
        transport->send(peer, p2p_tag(static_cast<uint32_t>(c)), out[i].data(), out[i].size(),
                        &Completed::fn, &sent[i]);
      }
    }
  };
  if (recv_first) {
    post_recvs();
    bootstrap.barrier();
    post_sends();
  } else {
    post_sends();
    bootstrap.barrier();
    post_recvs();
  }
  const bool finished = wait_for(*transport, [&] {
    for (size_t i = 0; i < out.size(); ++i) {
      if (sent[i].count == 0 || received[i].count == 0) return false;
    }
    return true;
  });
  ASSERT_TRUE(finished) << "rank " << me << ": messages did not complete";
  for (int peer = 0; peer < n; ++peer) {
    for (size_t c = 0; c < cases; ++c) {
      const size_t i = static_cast<size_t>(peer) * cases + c;
      EXPECT_EQ(sent[i].count, 1);
      EXPECT_EQ(received[i].count, 1);
      EXPECT_TRUE(sent[i].status.ok) << "send to " << peer << " size " << kSizes[c];
      EXPECT_EQ(sent[i].status.length, kSizes[c]);
      ASSERT_TRUE(received[i].status.ok) << "recv from " << peer << " size " << kSizes[c];
      EXPECT_EQ(received[i].status.length, kSizes[c]);
      EXPECT_TRUE(in[i] == pattern(peer, me, static_cast<int>(c), kSizes[c]))
          << "rank " << me << ": wrong bytes from " << peer << ", size " << kSizes[c];
    }
  }
  bootstrap.barrier();
}

TEST(UcxP2p, AllSizesRecvPostedFirst) {
  for (int ranks = 2; ranks <= 4; ++ranks) {
    SCOPED_TRACE(ranks);
    expect_all_exited_zero(run_ranks(ranks, [](ForkBootstrap& b) { exchange_all_sizes(b, true); }));
  }
}

TEST(UcxP2p, AllSizesSendPostedFirst) {
  for (int ranks = 2; ranks <= 4; ++ranks) {
    SCOPED_TRACE(ranks);
    expect_all_exited_zero(
        run_ranks(ranks, [](ForkBootstrap& b) { exchange_all_sizes(b, false); }));
  }
}

// A size-1 job (the singleton case) talks to itself through the same paths.
TEST(UcxP2p, SingletonSendsToItself) {
  expect_all_exited_zero(run_ranks(1, [](ForkBootstrap& b) {
    exchange_all_sizes(b, true);
    exchange_all_sizes(b, false);
    auto transport = make_ucx_transport(b);
    EXPECT_EQ(transport->size(), 1);
    EXPECT_EQ(transport->name(), "ucx");
    std::vector<std::byte> big = pattern(0, 0, 9, 100), small(10);
    Completed sent, received;
    transport->send(0, p2p_tag(3), big.data(), big.size(), &Completed::fn, &sent);
    transport->recv(0, p2p_tag(3), small.data(), small.size(), &Completed::fn, &received);
    ASSERT_TRUE(wait_for(*transport, [&] { return sent.count && received.count; }));
    EXPECT_FALSE(received.status.ok);
    EXPECT_EQ(received.status.code, Errc::truncated);
  }));
}

// Bad arguments are the caller's bug and throw, naming the cause.
TEST(UcxP2p, BadArgumentsThrow) {
  expect_all_exited_zero(run_ranks(1, [](ForkBootstrap& b) {
    auto transport = make_ucx_transport(b);
    std::byte byte{};
    Completed c;
    try {
      transport->send(1, p2p_tag(0), &byte, 1, &Completed::fn, &c);
      ADD_FAILURE() << "send to rank 1 of 1 accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::invalid_argument);
      EXPECT_NE(std::string(e.what()).find("peer 1"), std::string::npos) << e.what();
    }
    EXPECT_THROW(transport->recv(-1, p2p_tag(0), &byte, 1, &Completed::fn, &c), Error);
    EXPECT_THROW(transport->send(0, Tag{1} << 50, &byte, 1, &Completed::fn, &c), Error);
    EXPECT_THROW(transport->am_send(3, 0, {}), Error);
    EXPECT_THROW(transport->probe(2, 0, 0), Error);
    EXPECT_EQ(c.count, 0);
  }));
}

// Same-tag messages from one sender match receives in send order, mixing
// eager and rendezvous sizes, with receives posted both before and after.
TEST(UcxP2p, SameTagMessagesKeepOrder) {
  expect_all_exited_zero(run_ranks(2, [](ForkBootstrap& bootstrap) {
    auto transport = make_ucx_transport(bootstrap);
    constexpr int kCount = 40;
    auto size_of = [](int i) { return i % 3 == 0 ? size_t{200000} : size_t{16}; };
    const Tag t = p2p_tag(77);
    if (transport->rank() == 0) {
      std::vector<std::vector<std::byte>> out(kCount);
      std::vector<Completed> sent(kCount);
      for (int i = 0; i < kCount; ++i) {
        out[static_cast<size_t>(i)] = pattern(0, 1, i, size_of(i));
        transport->send(1, t, out[static_cast<size_t>(i)].data(), size_of(i), &Completed::fn,
                        &sent[static_cast<size_t>(i)]);
      }
      bootstrap.barrier();
      ASSERT_TRUE(wait_for(*transport, [&] {
        for (const Completed& c : sent)
          if (c.count == 0) return false;
        return true;
      }));
      for (const Completed& c : sent)
        EXPECT_TRUE(c.status.ok);
    } else {
      // Capacity fits any message; the length and bytes tell which one matched.
      std::vector<std::vector<std::byte>> in(kCount, std::vector<std::byte>(200000));
      std::vector<Completed> received(kCount);
      for (int i = 0; i < kCount / 2; ++i) {
        transport->recv(0, t, in[static_cast<size_t>(i)].data(), 200000, &Completed::fn,
                        &received[static_cast<size_t>(i)]);
      }
      bootstrap.barrier();
      for (int i = kCount / 2; i < kCount; ++i) {
        transport->recv(0, t, in[static_cast<size_t>(i)].data(), 200000, &Completed::fn,
                        &received[static_cast<size_t>(i)]);
      }
      ASSERT_TRUE(wait_for(*transport, [&] {
        for (const Completed& c : received)
          if (c.count == 0) return false;
        return true;
      }));
      for (int i = 0; i < kCount; ++i) {
        const auto& got = in[static_cast<size_t>(i)];
        const Completed& c = received[static_cast<size_t>(i)];
        ASSERT_TRUE(c.status.ok);
        ASSERT_EQ(c.status.length, size_of(i)) << "message " << i << " overtaken";
        EXPECT_TRUE(std::equal(got.begin(), got.begin() + static_cast<std::ptrdiff_t>(size_of(i)),
                               pattern(0, 1, i, size_of(i)).begin()))
            << "message " << i;
      }
    }
    bootstrap.barrier();
  }));
}

// An eager and a rendezvous message longer than the receive report
// truncation; the pair keeps working afterwards.
TEST(UcxP2p, TruncationIsReported) {
  expect_all_exited_zero(run_ranks(2, [](ForkBootstrap& bootstrap) {
    auto transport = make_ucx_transport(bootstrap);
    const std::array<size_t, 3> lengths = {100, size_t{1} << 20, 33};
    const std::array<size_t, 3> capacities = {10, 1024, 33};
    if (transport->rank() == 0) {
      std::vector<std::vector<std::byte>> out;
      std::vector<Completed> sent(lengths.size());
      for (size_t i = 0; i < lengths.size(); ++i) {
        out.push_back(pattern(0, 1, static_cast<int>(i), lengths[i]));
        transport->send(1, p2p_tag(static_cast<uint32_t>(i)), out[i].data(), lengths[i],
                        &Completed::fn, &sent[i]);
      }
      ASSERT_TRUE(
          wait_for(*transport, [&] { return sent[0].count && sent[1].count && sent[2].count; }));
    } else {
      std::vector<std::vector<std::byte>> in;
      std::vector<Completed> received(lengths.size());
      for (size_t i = 0; i < lengths.size(); ++i)
        in.emplace_back(capacities[i]);
      // The first is posted late (unexpected message), the others early.
      for (size_t i = 1; i < lengths.size(); ++i) {
        transport->recv(0, p2p_tag(static_cast<uint32_t>(i)), in[i].data(), capacities[i],
                        &Completed::fn, &received[i]);
      }
      ASSERT_TRUE(wait_for(
          *transport, [&] { return transport->probe(0, p2p_tag(0), tag::kTagMask).has_value(); }));
      transport->recv(0, p2p_tag(0), in[0].data(), capacities[0], &Completed::fn, &received[0]);
      ASSERT_TRUE(wait_for(
          *transport, [&] { return received[0].count && received[1].count && received[2].count; }));
      EXPECT_FALSE(received[0].status.ok);
      EXPECT_EQ(received[0].status.code, Errc::truncated);
      EXPECT_FALSE(received[1].status.ok);
      EXPECT_EQ(received[1].status.code, Errc::truncated);
      ASSERT_TRUE(received[2].status.ok);
      EXPECT_TRUE(in[2] == pattern(0, 1, 2, 33));
    }
    bootstrap.barrier();
  }));
}

// probe() sees an unmatched message without consuming it, by exact peer and
// tag, by any peer, and under a mask that ignores the stamp (how a stamp
// mismatch is diagnosed).
TEST(UcxP2p, ProbeFindsUnmatchedMessages) {
  expect_all_exited_zero(run_ranks(3, [](ForkBootstrap& bootstrap) {
    auto transport = make_ucx_transport(bootstrap);
    const Tag sent_tag = p2p_tag(5, /*stamp=*/0x21, /*channel=*/3);
    const Tag expected_tag = p2p_tag(5, /*stamp=*/0x22, /*channel=*/3);
    std::vector<std::byte> out = pattern(transport->rank(), 0, 0, 77);
    Completed sent;
    if (transport->rank() == 2) {
      transport->send(0, sent_tag, out.data(), out.size(), &Completed::fn, &sent);
      ASSERT_TRUE(wait_for(*transport, [&] { return sent.count == 1; }));
    }
    if (transport->rank() == 0) {
      std::optional<Transport::Probe> found;
      ASSERT_TRUE(wait_for(*transport, [&] {
        found = transport->probe(2, sent_tag, tag::kTagMask);
        return found.has_value();
      }));
      EXPECT_EQ(found->source, 2);
      EXPECT_EQ(found->tag, sent_tag);
      EXPECT_EQ(found->length, 77u);
      EXPECT_FALSE(transport->probe(1, sent_tag, tag::kTagMask).has_value());
      EXPECT_FALSE(transport->probe(2, expected_tag, tag::kTagMask).has_value());
      auto any = transport->probe(-1, expected_tag, tag::kTagMask & ~tag::kStampMask);
      ASSERT_TRUE(any.has_value());
      EXPECT_EQ(any->source, 2);
      EXPECT_EQ(tag::stamp(any->tag), 0x21u);
      // Still there after probing: receive it.
      std::vector<std::byte> in(77);
      Completed received;
      transport->recv(2, sent_tag, in.data(), in.size(), &Completed::fn, &received);
      ASSERT_TRUE(wait_for(*transport, [&] { return received.count == 1; }));
      EXPECT_TRUE(received.status.ok);
      EXPECT_TRUE(in == pattern(2, 0, 0, 77));
      EXPECT_FALSE(transport->probe(-1, sent_tag, tag::kTagMask).has_value());
    }
    bootstrap.barrier();
  }));
}

// block() with no time bound of its own must return when a message arrives
// (rank 1) or when the extra fd becomes readable (rank 0); the harness's
// bound is what fails the test if it never wakes.
TEST(UcxP2p, BlockWakesOnMessageAndExtraFd) {
  expect_all_exited_zero(run_ranks(2, [](ForkBootstrap& bootstrap) {
    auto transport = make_ucx_transport(bootstrap);
    const auto forever = std::chrono::hours(1);
    std::vector<std::byte> data = pattern(0, 1, 0, 4096);
    if (transport->rank() == 0) {
      bootstrap.barrier();
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      Completed sent;
      transport->send(1, p2p_tag(1), data.data(), data.size(), &Completed::fn, &sent);
      while (sent.count == 0) {
        if (!transport->progress()) transport->block(-1, forever);
      }
      EXPECT_TRUE(sent.status.ok);
      // The extra fd: a pipe written by another thread after a while.
      int fds[2];
      ASSERT_EQ(::pipe(fds), 0);
      std::thread writer([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        const char byte = 1;
        EXPECT_EQ(::write(fds[1], &byte, 1), 1);
      });
      auto readable = [&] {
        pollfd p{fds[0], POLLIN, 0};
        return ::poll(&p, 1, 0) == 1;
      };
      while (!readable()) {
        transport->progress();
        transport->block(fds[0], forever);
      }
      writer.join();
      ::close(fds[0]);
      ::close(fds[1]);
    } else {
      std::vector<std::byte> in(4096);
      Completed received;
      transport->recv(0, p2p_tag(1), in.data(), in.size(), &Completed::fn, &received);
      bootstrap.barrier();
      int sleeps = 0;
      while (received.count == 0) {
        if (!transport->progress()) {
          transport->block(-1, forever);
          ++sleeps;
        }
      }
      EXPECT_TRUE(received.status.ok);
      EXPECT_TRUE(in == data);
      std::printf("rank 1: woke for the message after %d block() calls\n", sleeps);
    }
    bootstrap.barrier();
  }));
}

}  // namespace
}  // namespace grove::testing
