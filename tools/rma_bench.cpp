// `grove rma-bench`: ring channels (safe, raw) against point-to-point
// between ranks 0 and 1, run under `grove run -n N`: one-way latency
// (ping-pong, half the round trip: mean and worst of a repeat) and goodput
// (a stream of messages, delivered bytes over the time until the reader's
// acknowledgement), per payload, quiet or with background traffic (ranks
// 2 and up in pairs ping-pong 64 KiB point-to-point messages). Raw TSV
// rows: mode, background, metric, payload, repeat, value; rank 0 prints the
// median and its 95% bootstrap CI per cell (docs/rma.md), and for rings the
// path its messages took, how many of its waits slept (`sleeps`) and how
// many of those sleeps ran out their time limit (`sleeps_timed_out`).
// The goodput stream also gives the seed's "send side vs delivery" table:
// the writer's inject rate (messages over its send time) and the reader's
// delivered rate in messages a second. Other tables (--table loss, width)
// live in rma_bench_rate.cpp and rma_bench_width.cpp.

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <tuple>

#include <fmt/format.h>

#include "command.hpp"
#include "core/params.hpp"
#include "grove/grove.hpp"
#include "rma_bench_common.hpp"
#include "suite/runner.hpp"
#include "usage.hpp"

namespace grove::tools {
namespace {

using rma::Clock;
using rma::kTagAck;
using rma::kTagData;
using rma::Row;
using rma::seconds_since;
using RmaBenchArgs = rma::Args;

// One way of moving a message from rank 0 to rank 1 and back.
class Channel {
 public:
  virtual ~Channel() = default;
  virtual void send(int to, std::span<const std::byte> message) = 0;
  virtual size_t recv(int from, std::span<std::byte> out) = 0;
  // Raw ring only: messages the reader lost so far.
  virtual uint64_t lost() const { return 0; }
  // Rings: how this rank's messages went so far (LaneStats): chunked into
  // slots, and by descriptor.
  struct Paths {
    uint64_t chunked = 0;
    uint64_t by_descriptor = 0;
    uint64_t single_copy = 0;
    uint64_t sleeps = 0;            // this rank's waits that slept (LaneStats::sleeps)
    uint64_t sleeps_timed_out = 0;  // of those sleeps, the ones that ran out their limit
  };
  virtual Paths paths() const { return {}; }
  virtual void close() {}
};

class P2pChannel final : public Channel {
 public:
  explicit P2pChannel(Comm& comm) : comm_(comm) {}
  void send(int to, std::span<const std::byte> message) override {
    comm_.send(message, to, kTagData);
  }
  size_t recv(int from, std::span<std::byte> out) override {
    return comm_.recv(out, from, kTagData).bytes;
  }

 private:
  Comm& comm_;
};

class RingChannel final : public Channel {
 public:
  RingChannel(Comm& comm, RingMode mode, uint32_t depth, size_t capacity)
      : ring_(comm, {{0, 1, depth, capacity}, {1, 0, depth, capacity}}, mode) {}
  void send(int to, std::span<const std::byte> message) override { ring_.send(to, message); }
  size_t recv(int from, std::span<std::byte> out) override { return ring_.recv(from, out); }
  uint64_t lost() const override {
    uint64_t lost = 0;
    for (const LaneStats& s : ring_.stats())
      lost += s.lost;
    return lost;
  }
  Paths paths() const override {
    Paths p;
    for (const LaneStats& s : ring_.stats()) {
      p.chunked += s.chunked;
      p.by_descriptor += s.by_descriptor;
      p.single_copy += s.single_copy;
      p.sleeps += s.sleeps;
      p.sleeps_timed_out += s.sleeps_timed_out;
    }
    return p;
  }
  void close() override { ring_.close(); }

 private:
  Ring ring_;
};

// Ranks 0 and 1: every measurement of one mode and payload.
void measure(Comm& comm, Channel& channel, const RmaBenchArgs& args, size_t stream_bytes,
             const std::string& mode, size_t payload, std::vector<Row>& rows) {
  const int me = comm.rank();
  std::vector<std::byte> out(std::max<size_t>(payload, 8)), in(std::max<size_t>(payload, 8));
  for (size_t i = 0; i < payload; ++i)
    out[i] = static_cast<std::byte>(i * 7 + 1);
  const bool raw = mode == "raw";
  const int pingpongs = std::max(1, payload >= 32 * 1024 ? args.pingpongs / 4 : args.pingpongs);
  const uint64_t stream =
      std::max<uint64_t>(1, std::min<uint64_t>(20000, stream_bytes / std::max<size_t>(payload, 1)));
  std::byte ack[8] = {};
  for (int repeat = 0; repeat < args.repeats; ++repeat) {
    const Channel::Paths paths_before = channel.paths();
    // One-way latency: half of each round trip. Raw mode loses nothing here
    // (one message in flight per lane).
    double total = 0, worst = 0;
    for (int i = 0; i < pingpongs; ++i) {
      if (me == 0) {
        const auto start = Clock::now();
        channel.send(1, std::span<const std::byte>(out.data(), payload));
        channel.recv(1, in);
        const double oneway = seconds_since(start) / 2;
        total += oneway;
        worst = std::max(worst, oneway);
      } else {
        const size_t got = channel.recv(0, in);
        channel.send(0, std::span<const std::byte>(in.data(), got));
      }
    }
    // Goodput: `stream` messages, numbered in their first 8 bytes (raw mode
    // reads until it sees the last); the reader acknowledges the end.
    rma::sync_pair(comm);
    uint64_t delivered = 0;
    if (me == 0) {
      const auto start = Clock::now();
      for (uint64_t s = 1; s <= stream; ++s) {
        if (payload >= 8) std::memcpy(out.data(), &s, 8);
        channel.send(1, std::span<const std::byte>(out.data(), payload));
      }
      // The send side's time: until the last send returned (raw mode never
      // waits for the reader; safe mode and p2p do when it falls behind).
      const double send_time = seconds_since(start);
      comm.recv(std::span(ack), 1, kTagAck);
      const double elapsed = seconds_since(start);
      std::memcpy(&delivered, ack, 8);
      rows.push_back(
          {mode, args.background, "oneway_mean_us", payload, repeat, total / pingpongs * 1e6});
      rows.push_back({mode, args.background, "oneway_worst_us", payload, repeat, worst * 1e6});
      rows.push_back({mode, args.background, "goodput_MiBps", payload, repeat,
                      static_cast<double>(delivered * payload) / elapsed / (1 << 20)});
      rows.push_back({mode, args.background, "delivered_pct", payload, repeat,
                      100.0 * static_cast<double>(delivered) / static_cast<double>(stream)});
      rows.push_back({mode, args.background, "inject_msgps", payload, repeat,
                      static_cast<double>(stream) / send_time});
      rows.push_back({mode, args.background, "goodput_msgps", payload, repeat,
                      static_cast<double>(delivered) / elapsed});
      if (mode != "p2p") {
        const Channel::Paths paths = channel.paths();
        rows.push_back({mode, args.background, "sleeps", payload, repeat,
                        static_cast<double>(paths.sleeps - paths_before.sleeps)});
        rows.push_back(
            {mode, args.background, "sleeps_timed_out", payload, repeat,
             static_cast<double>(paths.sleeps_timed_out - paths_before.sleeps_timed_out)});
      }
    } else {
      for (;;) {
        channel.recv(0, in);
        ++delivered;
        uint64_t seq = delivered;
        if (raw && payload >= 8) std::memcpy(&seq, in.data(), 8);
        if (seq >= stream) break;
      }
      std::memcpy(ack, &delivered, 8);
      comm.send(std::span<const std::byte>(ack), 0, kTagAck);
    }
    rma::sync_pair(comm);
  }
}

// The command line, checked before the job starts (tools/usage.hpp).
struct RmaBenchPlan {
  std::vector<std::string> modes;
  std::vector<size_t> sizes;
  size_t stream_bytes = 0;
};

RmaBenchPlan interpret(const RmaBenchArgs& args) {
  RmaBenchPlan plan;
  for (size_t pos = 0; pos <= args.modes.size();) {
    const size_t comma = std::min(args.modes.find(',', pos), args.modes.size());
    const std::string mode = args.modes.substr(pos, comma - pos);
    if (mode != "safe" && mode != "raw" && mode != "p2p") {
      throw Error(Errc::usage, fmt::format("--modes: '{}' is not one of safe, raw, p2p", mode));
    }
    plan.modes.push_back(mode);
    pos = comma + 1;
  }
  plan.sizes = bench::parse_sizes(args.sizes.empty() ? rma::kCompareSizes : args.sizes);
  std::sort(plan.sizes.begin(), plan.sizes.end());
  plan.sizes.erase(std::unique(plan.sizes.begin(), plan.sizes.end()), plan.sizes.end());
  const std::vector<size_t> stream = bench::parse_sizes(args.stream_bytes);
  if (stream.size() != 1) {
    throw Error(Errc::usage, fmt::format("--stream-bytes '{}' is not one size", args.stream_bytes));
  }
  plan.stream_bytes = stream[0];
  return plan;
}

int run_compare(const RmaBenchArgs& args) {
  const RmaBenchPlan plan = interpret_options([&] { return interpret(args); });
  Session session;
  Comm& world = session.world();
  rma::require_two_ranks(world, args);
  const std::vector<std::string>& modes = plan.modes;
  const std::vector<size_t>& sizes = plan.sizes;
  const size_t stream_bytes = plan.stream_bytes;
  size_t largest = 8;
  for (size_t s : sizes)
    largest = std::max(largest, s);
  // Every rank creates the rings (collective); ranks 2 and up then make
  // background traffic or wait.
  std::vector<Row> rows;
  // Rank 0, per ring cell: the path its messages took ("slot", "chunked
  // slot", "descriptor"; docs/rma.md "Large messages").
  std::map<std::string, std::string> paths;
  for (const std::string& mode : modes) {
    std::unique_ptr<Channel> channel;
    if (mode == "p2p") {
      channel = std::make_unique<P2pChannel>(world);
    } else {
      channel = std::make_unique<RingChannel>(
          world, mode == "safe" ? RingMode::safe : RingMode::raw, args.depth, largest);
    }
    // The lanes live between ranks 0 and 1; the others only take part in
    // creation and close.
    if (world.rank() >= 2) {
      if (args.background) {
        for (size_t i = 0; i < sizes.size(); ++i)
          rma::background_traffic(world);
      }
    } else {
      for (size_t payload : sizes) {
        const Channel::Paths before = channel->paths();
        measure(world, *channel, args, stream_bytes, mode, payload, rows);
        const Channel::Paths after = channel->paths();
        paths[fmt::format("{}/{}", mode, payload)] =
            after.by_descriptor > before.by_descriptor ? "descriptor"
            : after.single_copy > before.single_copy   ? "single copy"
            : after.chunked > before.chunked           ? "chunked slot"
                                                       : "slot";
        if (args.background && world.rank() == 0) rma::stop_background(world);
      }
    }
    channel->close();
    world.barrier();
  }
  if (world.rank() != 0) return 0;
  if (!args.tsv.empty()) rma::write_tsv(args.tsv, rows);
  fmt::print("# grove rma-bench: {} ranks, {} repeats, depth {}, {}background\n", world.size(),
             args.repeats, args.depth, args.background ? "" : "no ");
  // Ring payloads above ring_direct_bytes travel by descriptor where the
  // writer has no mapping of the reader's memory; mapped lanes keep every
  // payload in the slots (chunked above ring_chunk_bytes in safe mode).
  const auto direct_bytes =
      static_cast<uint64_t>(params::Registry::global().get("ring_direct_bytes").as_int);
  fmt::print(
      "# ring_direct_bytes {}: unmapped ring payloads above it travel by descriptor "
      "(path: what rank 0's messages took)\n",
      params::format_bytes(direct_bytes));
  rma::print_cells(rows, [&](const Row& r) {
    return r.mode == "p2p" ? "" : "  " + paths[fmt::format("{}/{}", r.mode, r.payload)];
  });
  return 0;
}

}  // namespace

int rma::run(const Args& args) {
  if (!args.from_tsv.empty()) {
    std::vector<Row> rows;
    for (const std::string& path : args.from_tsv)
      read_tsv(path, rows);
    // Side by side: each (payload, metric) with every file's cells in the
    // order given (grove, openmpi, mpich).
    std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
      return std::tie(a.payload, a.metric) < std::tie(b.payload, b.metric);
    });
    print_cells(rows);
    return 0;
  }
  if (args.table == "loss") return run_loss(args);
  if (args.table == "width") return run_width(args);
  if (args.table == "window") return run_window(args);
  if (args.table != "compare") {
    throw Error(Errc::usage, fmt::format("--table: '{}' is not one of compare, loss, width, window",
                                         args.table));
  }
  return run_compare(args);
}

void rma::require_two_ranks(Comm& world, const Args& args) {
  if (world.size() < 2) {
    throw Error(Errc::usage,
                fmt::format("grove rma-bench --table {}: run it under grove run -n 2 or more "
                            "(this job has {} rank)",
                            args.table, world.size()));
  }
}

namespace {

const RegisterCommand rma_bench_command{{
    "rma-bench",
    "Ring channels (safe, raw) vs point-to-point between ranks 0 and 1 (under grove run -n N)",
    [](CLI::App& sub) -> std::function<int()> {
      auto args = std::make_shared<RmaBenchArgs>();
      sub.add_option("--modes", args->modes, "safe, raw, p2p (comma list)")->capture_default_str();
      sub.add_option("--sizes", args->sizes,
                     fmt::format("Payloads: FROM:TO[:FACTOR] and/or a comma list (compare: {}; "
                                 "window: {})",
                                 rma::kCompareSizes, rma::kWindowSizes));
      sub.add_option("--repeats", args->repeats, "Repeats per cell")
          ->capture_default_str()
          ->check(CLI::Range(1, 100000));
      sub.add_option("--pingpongs", args->pingpongs, "Round trips per repeat")
          ->capture_default_str()
          ->check(CLI::Range(1, 100000000));
      sub.add_option("--stream-bytes", args->stream_bytes,
                     "Bytes streamed per goodput repeat (at most 20000 messages)")
          ->capture_default_str();
      sub.add_option("--depth", args->depth, "Slots per ring lane")
          ->capture_default_str()
          ->check(CLI::Range(1, 1 << 20));
      sub.add_flag("--background", args->background,
                   "Ranks 2 and up ping-pong 64 KiB point-to-point messages meanwhile");
      sub.add_option("--tsv", args->tsv, "Write the raw rows to this TSV file");
      rma::add_table_options(sub, *args);
      return [args] { return rma::run(*args); };
    },
}};

}  // namespace
}  // namespace grove::tools
