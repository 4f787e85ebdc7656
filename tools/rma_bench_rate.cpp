// `grove rma-bench --table loss`: the seed's "Loss by offered rate". Raw
// mode, one lane from rank 0 to rank 1 per depth; rank 0 sends --messages
// messages, the k-th not before start + k * pace (an absolute deadline, so a
// late send does not push the later ones back; pace 0 is flat out), busy-
// waiting on the steady clock (a sleep's wake-up is far coarser than the
// paces); rank 1 reads until it has the last one. Each message carries its
// sequence number in its first 8 bytes. Raw mode never loses the newest
// message, so the reader always ends, and then delivered + lost == sent: a
// repeat where it does not is an error (Errc::internal), not a row.
// Rows (rank 0): mode "raw/depth=D/pace_ns=P", metrics lost_pct (100 -
// delivered %) and offered_msgps (messages over rank 0's send time: the
// rate the pace achieved).

#include <cstring>

#include <fmt/format.h>

#include "rma_bench_common.hpp"
#include "usage.hpp"

namespace grove::tools::rma {
namespace {

struct LossPlan {
  size_t payload = 0;
  std::vector<uint64_t> depths;
  std::vector<uint64_t> paces;
};

LossPlan interpret_loss(const Args& args) {
  LossPlan plan;
  plan.payload = parse_one_size("--payload", args.payload, 8);
  plan.depths = parse_counts("--depths", args.depths, 1, 1 << 20);
  // A pace above 1 s would make a repeat of 20000 messages last hours.
  plan.paces = parse_counts("--paces", args.paces, 0, 1000000000);
  return plan;
}

// Rank 0: one repeat's sends; the time they took.
double paced_sends(Ring& ring, std::vector<std::byte>& out, uint64_t messages, uint64_t pace_ns) {
  const auto start = Clock::now();
  for (uint64_t s = 1; s <= messages; ++s) {
    if (pace_ns > 0) {
      const auto deadline = start + std::chrono::nanoseconds((s - 1) * pace_ns);
      while (Clock::now() < deadline) {
      }
    }
    std::memcpy(out.data(), &s, 8);
    ring.send(1, out);
  }
  return seconds_since(start);
}

// Rank 1: reads until the message numbered `messages`; how many it read.
uint64_t read_to_last(Ring& ring, std::vector<std::byte>& in, uint64_t messages) {
  uint64_t delivered = 0;
  for (;;) {
    ring.recv(0, in);
    ++delivered;
    uint64_t seq = 0;
    std::memcpy(&seq, in.data(), 8);
    if (seq >= messages) return delivered;
  }
}

uint64_t lost_so_far(const Ring& ring) {
  uint64_t lost = 0;
  for (const LaneStats& s : ring.stats())
    lost += s.lost;
  return lost;
}

}  // namespace

int run_loss(const Args& args) {
  const LossPlan plan = interpret_options([&] { return interpret_loss(args); });
  Session session;
  Comm& world = session.world();
  require_two_ranks(world, args);
  const int me = world.rank();
  std::vector<Row> rows;
  std::vector<std::byte> buffer(plan.payload);
  for (uint64_t depth : plan.depths) {
    // Collective: every rank, one lane 0 -> 1.
    Ring ring(world, {{0, 1, static_cast<uint32_t>(depth), plan.payload}}, RingMode::raw);
    for (uint64_t pace : plan.paces) {
      const std::string mode = fmt::format("raw/depth={}/pace_ns={}", depth, pace);
      // Ranks 2 and up make background traffic or wait, one cell at a time
      // (a wait is bounded by timeout_ms).
      if (me >= 2) {
        if (args.background) background_traffic(world);
        world.barrier();
        continue;
      }
      for (int repeat = 0; repeat < args.repeats; ++repeat) {
        sync_pair(world);
        uint64_t report[2] = {};  // rank 1's delivered and lost of this repeat
        if (me == 0) {
          const double send_time = paced_sends(ring, buffer, args.messages, pace);
          world.recv(std::as_writable_bytes(std::span(report)), 1, kTagAck);
          const uint64_t delivered = report[0], lost = report[1];
          if (delivered + lost != args.messages) {
            throw Error(Errc::internal,
                        fmt::format("rma-bench loss, {}, repeat {}: delivered {} + lost {} != "
                                    "sent {}",
                                    mode, repeat, delivered, lost, args.messages));
          }
          rows.push_back({mode, args.background, "lost_pct", plan.payload, repeat,
                          100.0 - 100.0 * static_cast<double>(delivered) /
                                      static_cast<double>(args.messages)});
          rows.push_back({mode, args.background, "offered_msgps", plan.payload, repeat,
                          static_cast<double>(args.messages) / send_time});
        } else {
          const uint64_t lost_before = lost_so_far(ring);
          report[0] = read_to_last(ring, buffer, args.messages);
          report[1] = lost_so_far(ring) - lost_before;
          world.send(std::as_bytes(std::span(report)), 0, kTagAck);
        }
      }
      if (args.background && me == 0) stop_background(world);
      world.barrier();
    }
    ring.close();
    world.barrier();
  }
  if (me != 0) return 0;
  if (!args.tsv.empty()) write_tsv(args.tsv, rows);
  fmt::print(
      "# grove rma-bench --table loss: {} ranks, {} repeats, {} messages of {} B a repeat, "
      "{}background\n",
      world.size(), args.repeats, args.messages, plan.payload, args.background ? "" : "no ");
  print_cells(rows);
  return 0;
}

}  // namespace grove::tools::rma
