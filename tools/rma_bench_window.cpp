// `grove rma-bench --table window`: put and get on a Window<uint8_t>,
// rank 0 to rank 1's memory (the others only create and close it), per
// payload and repeat:
// - latency_us: the mean of --pingpongs operations, each one put followed
//   by flush(1) (the target holds the bytes when it returns), or one get
//   (it returns with the bytes);
// - bandwidth_MiBps: min(20000, --stream-bytes / payload) puts and one
//   flush(1) at the end, or as many gets, over the time they took.
// (Window<uint8_t>: grove has no Datatype for std::byte.)
// Before a payload is timed, rank 0 puts a pattern, flushes, gets it back
// and compares: a difference is Errc::internal naming the first byte.
// Rows (rank 0): mode "grove/put", "grove/get"; the MPI peers emit the same
// rows with their library's name (docs/rma.md "Benchmark").

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "rma_bench_common.hpp"
#include "suite/runner.hpp"
#include "usage.hpp"

namespace grove::tools::rma {
namespace {

struct WindowPlan {
  std::vector<size_t> sizes;
  size_t stream_bytes = 0;
};

WindowPlan interpret_window(const Args& args) {
  WindowPlan plan;
  plan.sizes = bench::parse_sizes(args.sizes.empty() ? kWindowSizes : args.sizes);
  std::sort(plan.sizes.begin(), plan.sizes.end());
  plan.sizes.erase(std::unique(plan.sizes.begin(), plan.sizes.end()), plan.sizes.end());
  if (plan.sizes.front() == 0) throw Error(Errc::usage, "--sizes: a payload of 0 bytes");
  plan.stream_bytes = parse_one_size("--stream-bytes", args.stream_bytes, 1);
  return plan;
}

void check_round_trip(Window<uint8_t>& window, size_t payload) {
  std::vector<uint8_t> out(payload), back(payload);
  for (size_t i = 0; i < payload; ++i)
    out[i] = static_cast<uint8_t>((i * 13 + payload) & 0xff);
  window.put(1, 0, out);
  window.flush(1);
  window.get(1, 0, std::span(back));
  const auto diff = std::mismatch(out.begin(), out.end(), back.begin());
  if (diff.first != out.end()) {
    throw Error(
        Errc::internal,
        fmt::format("rma-bench window, {} B: byte {} read back as {} after a put of {}", payload,
                    diff.first - out.begin(), int{*diff.second}, int{*diff.first}));
  }
}

void measure_window(Window<uint8_t>& window, const Args& args, size_t payload, size_t stream_bytes,
                    std::vector<Row>& rows) {
  std::vector<uint8_t> buffer(payload, 1);
  const uint64_t stream = std::max<uint64_t>(1, std::min<uint64_t>(20000, stream_bytes / payload));
  for (int repeat = 0; repeat < args.repeats; ++repeat) {
    auto start = Clock::now();
    for (int i = 0; i < args.pingpongs; ++i) {
      window.put(1, 0, buffer);
      window.flush(1);
    }
    rows.push_back({"grove/put", false, "latency_us", payload, repeat,
                    seconds_since(start) / args.pingpongs * 1e6});
    start = Clock::now();
    for (int i = 0; i < args.pingpongs; ++i)
      window.get(1, 0, std::span(buffer));
    rows.push_back({"grove/get", false, "latency_us", payload, repeat,
                    seconds_since(start) / args.pingpongs * 1e6});
    const double mib = static_cast<double>(stream * payload) / (1 << 20);
    start = Clock::now();
    for (uint64_t i = 0; i < stream; ++i)
      window.put(1, 0, buffer);
    window.flush(1);
    rows.push_back(
        {"grove/put", false, "bandwidth_MiBps", payload, repeat, mib / seconds_since(start)});
    start = Clock::now();
    for (uint64_t i = 0; i < stream; ++i)
      window.get(1, 0, std::span(buffer));
    rows.push_back(
        {"grove/get", false, "bandwidth_MiBps", payload, repeat, mib / seconds_since(start)});
  }
}

}  // namespace

int run_window(const Args& args) {
  const WindowPlan plan = interpret_options([&] {
    if (args.background) {
      throw Error(Errc::usage, "--background: --table window has no background traffic");
    }
    return interpret_window(args);
  });
  Session session;
  Comm& world = session.world();
  require_two_ranks(world, args);
  Window<uint8_t> window(world, plan.sizes.back());
  std::vector<Row> rows;
  for (size_t payload : plan.sizes) {
    if (world.rank() == 0) {
      check_round_trip(window, payload);
      measure_window(window, args, payload, plan.stream_bytes, rows);
    }
    // The others wait one payload at a time (a wait is bounded by timeout_ms).
    world.barrier();
  }
  window.close();
  if (world.rank() != 0) return 0;
  if (!args.tsv.empty()) write_tsv(args.tsv, rows);
  fmt::print(
      "# grove rma-bench --table window: rank 0 to rank 1, {} repeats, {} operations a "
      "latency repeat\n",
      args.repeats, args.pingpongs);
  print_cells(rows);
  return 0;
}

}  // namespace grove::tools::rma
