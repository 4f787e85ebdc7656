// Multi-process driver for ring channels (grove::Ring), run by
// `grove run -n N` (tests/mp/tests.cmake). Modes:
//
//   (none)    safe mode, every ordered pair a lane (depth 8, 256 B): each
//             rank sends 2000 messages to every other, received with
//             recv_any: every message delivered once, in order per lane,
//             exact bytes; counters sent = delivered, lost = corrupt = 0,
//             max_lag = 1. Then lanes of 256 KiB from every rank to its
//             right neighbour: messages of 0 B .. 256 KiB (the chunked
//             path above ring_chunk_bytes), exact bytes; each rank
//             prints how its messages went (sent, chunked, by
//             descriptor).
//             Then raw mode: 1000 messages into a depth-4 lane before the
//             reader looks: exactly 4 delivered (the last four, in order)
//             and 996 lost; and a soak where every rank floods every other
//             while reading: delivered + lost == sent on every lane, the
//             delivered ones in increasing order with exact bytes; and a
//             raw soak of messages on both sides of ring_direct_bytes
//             (64 B .. 256 KiB) to the right neighbour: the same invariant,
//             nothing corrupt.
//             Prints "ring ok: N ranks, C cases".
//             Run with --param ring_direct_bytes=4096 too, so the large
//             case's sizes fall below, at and above the threshold: through
//             mappings they still go in the slots, through UCX's put/get
//             (rma_direct=false) by descriptor.
//   errors    a message longer than the lane's capacity, a send on a lane
//             that does not exist, a short receive buffer: named errors.
//   mismatch  rank 0 passes a lane with another depth: every rank gets
//             Errc::mismatch naming the lane.
//   zero      a lane of depth 0: a named error on every rank.
//   wake      ranks 0 and 1 (others idle): rank 0 writes 20 messages, each
//             after a 20 ms pause, so rank 1 is asleep in recv when it
//             comes; then rank 0 writes 21 messages into a depth-1 lane
//             while rank 1 pauses 20 ms before each recv, so rank 0 sleeps
//             on credits. Exact bytes and counts; run with
//             shm_wake_interval_us and wait_block_slice_us of 1 s, so a
//             sleep that runs out its limit is one the peer's publication
//             did not end within a second: none may (sleeps_timed_out = 0
//             on both sides), and both sides slept at least once (a wait
//             that began before a 20 ms pause). Prints each side's counts.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "grove/grove.hpp"

namespace {

using grove::Comm;
using grove::Lane;
using grove::Ring;
using grove::RingMode;

// Message `seq` (1-based) from `src`: [u64 seq][pattern bytes].
std::vector<std::byte> message(int src, uint64_t seq, size_t length) {
  std::vector<std::byte> m(std::max<size_t>(length, 8));
  std::memcpy(m.data(), &seq, 8);
  for (size_t i = 8; i < length; ++i)
    m[i] = static_cast<std::byte>((src * 131 + seq * 31 + i * 7) & 0xff);
  m.resize(length);
  return m;
}

void expect_message(const std::string& what, const std::byte* got, size_t got_length, int src,
                    uint64_t seq, size_t length) {
  const auto want = message(src, seq, length);
  if (got_length != length || std::memcmp(got, want.data(), length) != 0) {
    throw std::runtime_error(fmt::format("{}: message {} from rank {}: {} B, expected {} B{}", what,
                                         seq, src, got_length, length,
                                         got_length == length ? " (bytes differ)" : ""));
  }
}

uint64_t seq_of(const std::byte* m) {
  uint64_t seq = 0;
  std::memcpy(&seq, m, 8);
  return seq;
}

std::vector<Lane> all_pairs(int n, uint32_t depth, size_t capacity) {
  std::vector<Lane> lanes;
  for (int s = 0; s < n; ++s) {
    for (int d = 0; d < n; ++d) {
      if (s != d) lanes.push_back({s, d, depth, capacity});
    }
  }
  return lanes;
}

const grove::LaneStats& stats_of(const std::vector<grove::LaneStats>& all, int src, int dst) {
  for (const auto& s : all) {
    if (s.src == src && s.dst == dst) return s;
  }
  throw std::runtime_error(fmt::format("no counters for lane {} -> {}", src, dst));
}

struct Driver {
  Comm& comm;
  int cases = 0;

  int rank() const { return comm.rank(); }
  int size() const { return comm.size(); }

  // Safe mode all-to-all: senders interleave sends with receives so that
  // every rank makes progress while its own lanes are full.
  void safe_soak() {
    constexpr uint64_t kPer = 2000;
    constexpr size_t kLength = 200;
    Ring ring(comm, all_pairs(size(), 8, 256), RingMode::safe);
    std::vector<uint64_t> next_in(static_cast<size_t>(size()), 1);
    std::vector<uint64_t> next_out(static_cast<size_t>(size()), 1);
    uint64_t expected_total = kPer * static_cast<uint64_t>(size() - 1), received = 0;
    std::vector<std::byte> buffer(256);
    auto take = [&](const Ring::Received& got) {
      const uint64_t seq = seq_of(buffer.data());
      uint64_t& want = next_in[static_cast<size_t>(got.src)];
      if (seq != want) {
        throw std::runtime_error(
            fmt::format("safe soak: from rank {} message {} arrived while {} "
                        "was expected",
                        got.src, seq, want));
      }
      expect_message("safe soak", buffer.data(), got.bytes, got.src, seq, kLength);
      ++want;
      ++received;
    };
    bool sending = size() > 1;
    while (sending || received < expected_total) {
      sending = false;
      for (int d = 0; d < size(); ++d) {
        if (d == rank()) continue;
        uint64_t& s = next_out[static_cast<size_t>(d)];
        if (s > kPer) continue;
        sending = true;
        if (ring.try_send(d, message(rank(), s, kLength))) ++s;
      }
      if (sending) {
        while (auto got = ring.try_recv_any(buffer))
          take(*got);
      } else if (received < expected_total) {
        take(ring.recv_any(buffer));
      }
    }
    const auto stats = ring.stats();
    for (int other = 0; other < size(); ++other) {
      if (other == rank()) continue;
      const auto& out = stats_of(stats, rank(), other);
      const auto& in = stats_of(stats, other, rank());
      if (out.sent != kPer || in.delivered != kPer || in.lost != 0 || in.corrupt != 0 ||
          in.max_lag != 1) {
        throw std::runtime_error(
            fmt::format("safe soak counters: sent {} to {}, from {}: "
                        "delivered {} lost {} corrupt {} max_lag {}",
                        out.sent, other, other, in.delivered, in.lost, in.corrupt, in.max_lag));
      }
    }
    ring.close();
    ++cases;
  }

  // Every rank to its right neighbour, every size up to 256 KiB.
  void large(RingMode mode) {
    if (size() < 2) return;
    constexpr size_t kCapacity = 256 * 1024;
    std::vector<Lane> lanes;
    for (int s = 0; s < size(); ++s)
      lanes.push_back({s, (s + 1) % size(), 4, kCapacity});
    Ring ring(comm, lanes, mode);
    const int right = (rank() + 1) % size();
    const int left = (rank() - 1 + size()) % size();
    const std::vector<size_t> sizes{0, 8, 64, 4096, 8193, 32768, 65536 + 9, kCapacity};
    std::vector<std::byte> buffer(kCapacity);
    uint64_t seq = 0;
    for (size_t length : sizes) {
      ++seq;
      const auto out = message(rank(), seq, length);
      // Raw mode: one message in flight per lane (depth 4), nothing lost.
      ring.send(right, out);
      const size_t got = ring.recv(left, buffer);
      expect_message(fmt::format("large {}", mode == RingMode::safe ? "safe" : "raw"),
                     buffer.data(), got, left, seq, length);
      comm.barrier();
    }
    // A copy: stats() returns its vector by value.
    const auto stats = ring.stats();
    const auto& in = stats_of(stats, left, rank());
    if (in.delivered != sizes.size() || in.lost != 0 || in.corrupt != 0) {
      throw std::runtime_error(
          fmt::format("large: delivered {} lost {} corrupt {}", in.delivered, in.lost, in.corrupt));
    }
    // Which path the messages took (tests.cmake checks it per run).
    const auto& out = stats_of(stats, rank(), right);
    std::printf("rank %d large %s: sent %llu, chunked %llu, by descriptor %llu\n", rank(),
                mode == RingMode::safe ? "safe" : "raw", static_cast<unsigned long long>(out.sent),
                static_cast<unsigned long long>(out.chunked),
                static_cast<unsigned long long>(out.by_descriptor));
    ring.close();
    ++cases;
  }

  // 1000 messages into a depth-4 lane before the reader looks.
  void raw_exact_loss() {
    if (size() < 2) return;
    Ring ring(comm, {{0, 1, 4, 64}}, RingMode::raw);
    if (rank() == 0) {
      for (uint64_t s = 1; s <= 1000; ++s)
        ring.send(1, message(0, s, 40));
    }
    comm.barrier();
    if (rank() == 1) {
      std::vector<std::byte> buffer(64);
      for (uint64_t s = 997; s <= 1000; ++s) {
        const size_t got = ring.recv(0, buffer);
        expect_message("raw loss", buffer.data(), got, 0, seq_of(buffer.data()), 40);
        if (seq_of(buffer.data()) != s)
          throw std::runtime_error(
              fmt::format("raw loss: got message {}, expected {}", seq_of(buffer.data()), s));
      }
      if (ring.try_recv(0, buffer))
        throw std::runtime_error("raw loss: a fifth message was delivered");
      const auto stats = ring.stats();
      const auto& in = stats_of(stats, 0, 1);
      if (in.delivered != 4 || in.lost != 996 || in.max_lag != 997) {
        throw std::runtime_error(fmt::format("raw loss counters: delivered {} lost {} max_lag {}",
                                             in.delivered, in.lost, in.max_lag));
      }
    }
    comm.barrier();
    ring.close();
    ++cases;
  }

  // Every rank floods every other while reading what comes; after a
  // barrier (every message written) the readers drain. On every lane:
  // delivered + lost == sent, and the delivered messages increase.
  void raw_soak() {
    constexpr uint64_t kPer = 5000;
    constexpr size_t kLength = 100;
    Ring ring(comm, all_pairs(size(), 16, 128), RingMode::raw);
    std::vector<uint64_t> last(static_cast<size_t>(size()), 0);
    std::vector<std::byte> buffer(128);
    auto take = [&](const Ring::Received& got) {
      const uint64_t seq = seq_of(buffer.data());
      uint64_t& prev = last[static_cast<size_t>(got.src)];
      if (seq <= prev) {
        throw std::runtime_error(
            fmt::format("raw soak: from rank {} message {} after {}", got.src, seq, prev));
      }
      expect_message("raw soak", buffer.data(), got.bytes, got.src, seq, kLength);
      prev = seq;
    };
    for (uint64_t s = 1; s <= kPer; ++s) {
      for (int d = 0; d < size(); ++d) {
        if (d != rank()) ring.send(d, message(rank(), s, kLength));
      }
      if (s % 7 == 0) {
        while (auto got = ring.try_recv_any(buffer))
          take(*got);
      }
    }
    comm.barrier();
    while (auto got = ring.try_recv_any(buffer))
      take(*got);
    const auto stats = ring.stats();
    uint64_t lost = 0;
    for (int other = 0; other < size(); ++other) {
      if (other == rank()) continue;
      const auto& in = stats_of(stats, other, rank());
      if (in.delivered + in.lost != kPer || last[static_cast<size_t>(other)] != kPer ||
          in.corrupt != 0) {
        throw std::runtime_error(fmt::format(
            "raw soak: from rank {}: delivered {} + lost {} != "
            "sent {} (last {}, corrupt {})",
            other, in.delivered, in.lost, kPer, last[static_cast<size_t>(other)], in.corrupt));
      }
      lost += in.lost;
    }
    std::printf("rank %d raw soak: %llu lost of %llu\n", rank(),
                static_cast<unsigned long long>(lost),
                static_cast<unsigned long long>(kPer * static_cast<uint64_t>(size() - 1)));
    ring.close();
    ++cases;
  }

  // Raw mode, every rank floods its right neighbour with messages on both
  // sides of ring_direct_bytes (descriptors and one get above it) while
  // its left neighbour's arrive; then the readers drain. delivered + lost
  // == sent, the delivered ones increasing and exact, nothing corrupt (a
  // block rewritten under a fetch is a loss, not a torn delivery).
  void raw_large_soak() {
    if (size() < 2) return;
    constexpr uint64_t kPer = 400;
    constexpr size_t kCapacity = 256 * 1024;
    const std::vector<size_t> sizes{64, 4096, 4097, 32768, 65536 + 9, kCapacity};
    std::vector<Lane> lanes;
    for (int s = 0; s < size(); ++s)
      lanes.push_back({s, (s + 1) % size(), 4, kCapacity});
    Ring ring(comm, lanes, RingMode::raw);
    const int right = (rank() + 1) % size();
    const int left = (rank() - 1 + size()) % size();
    auto length_of = [&](uint64_t seq) { return sizes[seq % sizes.size()] - seq % 5; };
    std::vector<std::byte> buffer(kCapacity);
    uint64_t last = 0, delivered = 0;
    auto drain = [&] {
      while (auto got = ring.try_recv(left, buffer)) {
        const uint64_t seq = seq_of(buffer.data());
        if (seq <= last) {
          throw std::runtime_error(
              fmt::format("raw large soak: from rank {} message {} after {}", left, seq, last));
        }
        expect_message("raw large soak", buffer.data(), *got, left, seq, length_of(seq));
        last = seq;
        ++delivered;
      }
    };
    for (uint64_t s = 1; s <= kPer; ++s) {
      ring.send(right, message(rank(), s, length_of(s)));
      if (s % 3 == 0) drain();
    }
    comm.barrier();
    drain();
    const auto stats = ring.stats();
    const auto& in = stats_of(stats, left, rank());
    if (in.delivered + in.lost != kPer || in.delivered != delivered || last != kPer ||
        in.corrupt != 0) {
      throw std::runtime_error(fmt::format(
          "raw large soak: from rank {}: delivered {} + lost {} != sent {} (seen {}, last {}, "
          "corrupt {})",
          left, in.delivered, in.lost, kPer, delivered, last, in.corrupt));
    }
    std::printf("rank %d raw large soak: %llu lost of %llu\n", rank(),
                static_cast<unsigned long long>(in.lost), static_cast<unsigned long long>(kPer));
    ring.close();
    ++cases;
  }

  void run_all() {
    safe_soak();
    large(RingMode::safe);
    large(RingMode::raw);
    raw_exact_loss();
    raw_soak();
    raw_large_soak();
  }
};

void expect_error(const char* what, grove::Errc code, const std::function<void()>& body) {
  try {
    body();
  } catch (const grove::Error& e) {
    std::printf("ring %s: %s: %s\n", what, std::string(grove::errc_name(e.code())).c_str(),
                e.what());
    std::fflush(stdout);
    if (e.code() != code) throw;
    return;
  }
  throw std::runtime_error(fmt::format("{}: no error", what));
}

void errors(Comm& world) {
  Ring ring(world, {{0, 1, 2, 64}}, RingMode::safe);
  if (world.rank() == 0) {
    expect_error("too long", grove::Errc::invalid_argument,
                 [&] { ring.send(1, message(0, 1, 65)); });
    expect_error("no lane", grove::Errc::invalid_argument, [&] { ring.send(2, message(0, 1, 8)); });
    ring.send(1, message(0, 1, 40));
  }
  if (world.rank() == 1) {
    std::vector<std::byte> small(16), enough(64);
    expect_error("short buffer", grove::Errc::truncated, [&] { ring.recv(0, small); });
    // Nothing was consumed: the message is still there.
    const size_t got = ring.recv(0, enough);
    expect_message("after truncated", enough.data(), got, 0, 1, 40);
  }
  world.barrier();
  ring.close();
}

// Sleeps that the peer's publication must end (the "wake" mode above).
void wake(Comm& world) {
  const int me = world.rank();
  const int n = 20;
  const auto pause = std::chrono::milliseconds(20);
  std::vector<std::byte> in(64);
  auto lane_stats = [](const Ring& ring, int src, int dst) {
    for (const grove::LaneStats& s : ring.stats()) {
      if (s.src == src && s.dst == dst) return s;
    }
    throw std::runtime_error(fmt::format("no stats for lane {} -> {}", src, dst));
  };
  {
    // The reader sleeps in recv.
    Ring ring(world, {{0, 1, 4, 64}}, RingMode::safe);
    for (int i = 1; i <= n && me < 2; ++i) {
      if (me == 0) {
        std::this_thread::sleep_for(pause);
        ring.send(1, message(0, static_cast<uint64_t>(i), 40));
      } else {
        const size_t got = ring.recv(0, in);
        expect_message("wake reader", in.data(), got, 0, static_cast<uint64_t>(i), 40);
      }
    }
    if (me == 1) {
      const grove::LaneStats s = lane_stats(ring, 0, 1);
      std::printf("rank 1 reader: delivered %llu, sleeps %llu, timed out %llu\n",
                  static_cast<unsigned long long>(s.delivered),
                  static_cast<unsigned long long>(s.sleeps),
                  static_cast<unsigned long long>(s.sleeps_timed_out));
      if (s.delivered != static_cast<uint64_t>(n) || s.sleeps == 0 || s.sleeps_timed_out != 0)
        throw std::runtime_error("wake reader: counts wrong");
    }
    world.barrier();
    ring.close();
  }
  {
    // The writer sleeps on credits: one slot, and the reader pauses.
    Ring ring(world, {{0, 1, 1, 64}}, RingMode::safe);
    for (int i = 1; i <= n + 1 && me < 2; ++i) {
      if (me == 0) {
        ring.send(1, message(0, static_cast<uint64_t>(i), 24));
      } else {
        std::this_thread::sleep_for(pause);
        const size_t got = ring.recv(0, in);
        expect_message("wake writer", in.data(), got, 0, static_cast<uint64_t>(i), 24);
      }
    }
    if (me == 0) {
      const grove::LaneStats s = lane_stats(ring, 0, 1);
      std::printf("rank 0 writer: sent %llu, waits %llu, sleeps %llu, timed out %llu\n",
                  static_cast<unsigned long long>(s.sent), static_cast<unsigned long long>(s.waits),
                  static_cast<unsigned long long>(s.sleeps),
                  static_cast<unsigned long long>(s.sleeps_timed_out));
      if (s.sent != static_cast<uint64_t>(n + 1) || s.sleeps == 0 || s.sleeps_timed_out != 0)
        throw std::runtime_error("wake writer: counts wrong");
    }
    world.barrier();
    ring.close();
  }
}

// Ranks 0 and 1 ping-pong messages above ring_single_copy_bytes on a safe
// ring (the reader waits in recv when each is offered): exact bytes both
// ways, and each rank prints how its sends went (tests.cmake runs it with
// an offer time long enough that every offer is taken: single copy 3 of 3).
void single_copy(Comm& world) {
  constexpr size_t kCapacity = 256 * 1024;
  Ring ring(world, {{0, 1, 4, kCapacity}, {1, 0, 4, kCapacity}}, RingMode::safe);
  const std::vector<size_t> sizes{16385, 65536 + 9, kCapacity};
  std::vector<std::byte> buffer(kCapacity);
  const int me = world.rank();
  if (me <= 1) {
    const int peer = 1 - me;
    for (size_t i = 0; i < sizes.size(); ++i) {
      const uint64_t seq = i + 1;
      if (me == 0) ring.send(1, message(0, seq, sizes[i]));
      const size_t got = ring.recv(peer, buffer);
      expect_message("single copy", buffer.data(), got, peer, seq, sizes[i]);
      if (me == 1) ring.send(0, message(1, seq, sizes[i]));
    }
    const auto stats = ring.stats();
    const auto& out = stats_of(stats, me, peer);
    const auto& in = stats_of(stats, peer, me);
    std::printf(
        "rank %d single copy: sent %llu, single copy %llu, chunked %llu, corrupt %llu\n", me,
        static_cast<unsigned long long>(out.sent), static_cast<unsigned long long>(out.single_copy),
        static_cast<unsigned long long>(out.chunked), static_cast<unsigned long long>(in.corrupt));
  }
  world.barrier();
  ring.close();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  try {
    grove::Session session;
    Comm& world = session.world();
    if (mode == "errors") {
      errors(world);
      if (world.rank() == 0) std::printf("ring errors ok\n");
      return 0;
    }
    if (mode == "mismatch") {
      std::vector<Lane> lanes{{0, 1, 4, 64}, {1, 2, 4, 64}};
      if (world.rank() == 0) lanes[1].depth = 8;
      expect_error("mismatch", grove::Errc::mismatch,
                   [&] { Ring ring(world, lanes, RingMode::safe); });
      world.barrier();
      if (world.rank() == 0) std::printf("ring mismatch ok\n");
      return 0;
    }
    if (mode == "wake") {
      wake(world);
      if (world.rank() == 0) std::printf("ring wake ok\n");
      return 0;
    }
    if (mode == "single") {
      single_copy(world);
      if (world.rank() == 0) std::printf("ring single ok\n");
      return 0;
    }
    if (mode == "zero") {
      expect_error("zero depth", grove::Errc::invalid_argument, [&] {
        Ring ring(world, {{0, 1, 0, 64}}, RingMode::raw);
      });
      world.barrier();
      if (world.rank() == 0) std::printf("ring zero ok\n");
      return 0;
    }
    Driver driver{world};
    driver.run_all();
    world.barrier();
    if (world.rank() == 0) std::printf("ring ok: %d ranks, %d cases\n", world.size(), driver.cases);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ring FAILED: %s\n", e.what());
    return 1;
  }
}
