// `grove rma-bench --table width`: the seed's "Safe mode at width". Every
// rank of the job sends --messages messages of --payload bytes to every
// other rank through one safe ring (all to all, depth --depth; the seed's
// soak: 20000 messages a peer, 256 B, depth 8) and reads as many from each.
// One thread does both, so a send never blocks: try_send, and when a lane
// is full the rank reads what has come in and tries again later (two ranks
// blocking on each other's full lanes would otherwise wait forever). A send
// that found its lane full is counted once by the ring (LaneStats::waits),
// as the seed's blocked sends. Messages carry their per-lane sequence number
// in their first 8 bytes, and a message out of order is an error: safe mode
// delivers every message in order. A repeat that makes no progress for
// timeout_ms is Errc::timeout naming the rank and what it still waits for.
// Rows (rank 0): mode "safe/ranks=N", metrics delivered_pct (of every
// rank's messages) and max_blocked (the most blocked sends on one rank).

#include <algorithm>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "core/params.hpp"
#include "rma_bench_common.hpp"
#include "usage.hpp"

namespace grove::tools::rma {
namespace {

// This rank's counts of one repeat, gathered at rank 0.
struct RankCounts {
  uint64_t sent = 0;
  uint64_t delivered = 0;
  uint64_t blocked = 0;
};

uint64_t waits_of_writer(const Ring& ring, int me) {
  uint64_t waits = 0;
  for (const LaneStats& s : ring.stats())
    if (s.src == me) waits += s.waits;
  return waits;
}

RankCounts exchange_all(Comm& world, Ring& ring, size_t payload, uint64_t messages, int repeat) {
  const int me = world.rank(), n = world.size();
  const auto timeout =
      std::chrono::milliseconds(params::Registry::global().get("timeout_ms").as_int);
  std::vector<uint64_t> next(n, 1), seen(n, 0);  // per peer: to send, received
  std::vector<std::byte> out(payload), in(payload);
  RankCounts counts;
  const uint64_t waits_before = waits_of_writer(ring, me);
  const uint64_t expected = messages * static_cast<uint64_t>(n - 1);
  auto progress = Clock::now();
  while (counts.sent < expected || counts.delivered < expected) {
    bool moved = false;
    for (int peer = 0; peer < n; ++peer) {
      if (peer == me || next[peer] > messages) continue;
      std::memcpy(out.data(), &next[peer], 8);
      if (!ring.try_send(peer, out)) continue;
      ++next[peer];
      ++counts.sent;
      moved = true;
    }
    while (const auto got = ring.try_recv_any(in)) {
      uint64_t seq = 0;
      std::memcpy(&seq, in.data(), 8);
      if (got->bytes != payload || seq != seen[got->src] + 1) {
        throw Error(Errc::internal,
                    fmt::format("rma-bench width, repeat {}: rank {} got message {} ({} B) from "
                                "rank {} after {}: safe mode delivers in order",
                                repeat, me, seq, got->bytes, got->src, seen[got->src]));
      }
      ++seen[got->src];
      ++counts.delivered;
      moved = true;
    }
    if (moved) {
      progress = Clock::now();
      continue;
    }
    // Nothing to do: yield the core (at 24 ranks on 2 cores the peers this
    // rank waits for need it; a spin would hold it for a whole time slice).
    std::this_thread::yield();
    if (Clock::now() - progress > timeout) {
      throw Error(Errc::timeout,
                  fmt::format("rma-bench width, repeat {}: rank {} made no progress for "
                              "timeout_ms, with {} of {} sent and {} of {} received",
                              repeat, me, counts.sent, expected, counts.delivered, expected));
    }
  }
  counts.blocked = waits_of_writer(ring, me) - waits_before;
  return counts;
}

}  // namespace

int run_width(const Args& args) {
  const size_t payload = interpret_options([&] {
    if (args.background) {
      throw Error(Errc::usage,
                  "--background: --table width has no background traffic (every "
                  "rank is busy with the all to all)");
    }
    return parse_one_size("--payload", args.payload, 8);
  });
  Session session;
  Comm& world = session.world();
  require_two_ranks(world, args);
  const int n = world.size();
  std::vector<Lane> lanes;
  for (int src = 0; src < n; ++src)
    for (int dst = 0; dst < n; ++dst)
      if (src != dst) lanes.push_back({src, dst, args.depth, payload});
  Ring ring(world, lanes, RingMode::safe);
  const std::string mode = fmt::format("safe/ranks={}", n);
  std::vector<Row> rows;
  std::vector<RankCounts> all(world.rank() == 0 ? n : 1);
  for (int repeat = 0; repeat < args.repeats; ++repeat) {
    world.barrier();
    const RankCounts mine = exchange_all(world, ring, payload, args.messages, repeat);
    world.gather(std::as_bytes(std::span(&mine, 1)), std::as_writable_bytes(std::span(all)), 0);
    if (world.rank() != 0) continue;
    uint64_t sent = 0, delivered = 0, max_blocked = 0;
    for (const RankCounts& c : all) {
      sent += c.sent;
      delivered += c.delivered;
      max_blocked = std::max(max_blocked, c.blocked);
    }
    rows.push_back({mode, false, "delivered_pct", payload, repeat,
                    100.0 * static_cast<double>(delivered) / static_cast<double>(sent)});
    rows.push_back({mode, false, "max_blocked", payload, repeat, static_cast<double>(max_blocked)});
  }
  ring.close();
  world.barrier();
  if (world.rank() != 0) return 0;
  if (!args.tsv.empty()) write_tsv(args.tsv, rows);
  fmt::print(
      "# grove rma-bench --table width: {} ranks all to all, {} repeats, {} messages of {} "
      "B a peer, depth {}\n",
      n, args.repeats, args.messages, payload, args.depth);
  print_cells(rows);
  return 0;
}

}  // namespace grove::tools::rma
