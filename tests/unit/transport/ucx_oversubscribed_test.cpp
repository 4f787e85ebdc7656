// UCX transport with many more ranks than cores (16 ranks; the test machine
// has 2 cores) and waits that rely on block() alone: between progress calls
// a rank sleeps with no time bound but the test's, so a lost wake-up shows
// up as a timeout rather than as a slow pass.

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <array>
#include <cstdio>

#include "fork_ranks.hpp"
#include "transport/ucx/ucx_transport.hpp"

namespace grove::testing {
namespace {

using Clock = std::chrono::steady_clock;

double cpu_seconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

void exchange_rounds(ForkBootstrap& bootstrap) {
  auto transport = make_ucx_transport(bootstrap);
  const int me = transport->rank();
  const int n = transport->size();
  const auto limit = std::chrono::seconds(100);
  const double cpu_start = cpu_seconds();
  const auto wall_start = Clock::now();
  constexpr std::array<size_t, 5> kSizes = {0, 7, 4096, 65537, (size_t{1} << 20) + 3};
  // Round d: send to me + d, receive from me - d (every distance, so every
  // pair talks), each size in turn.
  int round = 0;
  for (int distance = 1; distance < n; ++distance) {
    const int to = (me + distance) % n;
    const int from = (me - distance + n) % n;
    for (size_t c = 0; c < kSizes.size(); ++c, ++round) {
      // Large messages on a few distances only, to keep the run short.
      if (kSizes[c] > 70000 && distance % 5 != 1) continue;
      const Tag t = tag::make(3, static_cast<uint32_t>(round), tag::Topology::none, 0, 0);
      std::vector<std::byte> out = pattern(me, to, round, kSizes[c]);
      std::vector<std::byte> in(kSizes[c]);
      Completed sent, received;
      transport->recv(from, t, in.data(), in.size(), &Completed::fn, &received);
      transport->send(to, t, out.data(), out.size(), &Completed::fn, &sent);
      ASSERT_TRUE(wait_blocking(
          *transport, [&] { return sent.count == 1 && received.count == 1; }, limit))
          << "rank " << me << ": round " << round << " (distance " << distance << ", " << kSizes[c]
          << " bytes) did not complete";
      ASSERT_TRUE(sent.status.ok);
      ASSERT_TRUE(received.status.ok);
      ASSERT_TRUE(in == pattern(from, me, round, kSizes[c]))
          << "rank " << me << ": wrong bytes in round " << round;
    }
  }
  // Active messages: everyone tells everyone, then waits to hear from all.
  int heard = 0;
  transport->set_am_handler(4, [&](int, std::span<const std::byte> payload) {
    EXPECT_EQ(payload.size(), 100u);
    ++heard;
  });
  const std::vector<std::byte> note(100, std::byte{7});
  for (int peer = 0; peer < n; ++peer)
    transport->am_send(peer, 4, note);
  ASSERT_TRUE(wait_blocking(
      *transport, [&] { return heard == n; }, limit))
      << "rank " << me << ": heard " << heard << " of " << n;
  transport_barrier(*transport);
  const double wall = std::chrono::duration<double>(Clock::now() - wall_start).count();
  if (me == 0) {
    std::printf("rank 0: %d ranks, wall %.2f s, cpu %.2f s\n", n, wall, cpu_seconds() - cpu_start);
  }
}

TEST(UcxOversubscribed, SixteenRanksWakeFromBlock) {
  const auto ends = run_ranks(16, exchange_rounds, std::chrono::seconds(110));
  for (size_t r = 0; r < ends.size(); ++r) {
    EXPECT_TRUE(ends[r].code == 0 && ends[r].signal == 0 && !ends[r].timed_out)
        << "rank " << r << ": " << ends[r].describe();
  }
}

}  // namespace
}  // namespace grove::testing
