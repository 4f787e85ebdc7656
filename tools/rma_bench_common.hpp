#pragma once
// Shared by the tables of `grove rma-bench` (docs/rma.md "Benchmark"):
// the options, the raw row, the background traffic of ranks 2 and up, the
// TSV and the summary rank 0 prints (median and 95% bootstrap CI a cell).
// compare: tools/rma_bench.cpp; loss: rma_bench_rate.cpp; width:
// rma_bench_width.cpp; window: rma_bench_window.cpp.

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "grove/grove.hpp"

namespace grove::tools::rma {

using Clock = std::chrono::steady_clock;

// compare's payloads: the seed's, and 64 KiB and 128 KiB on both sides of
// the default ring_direct_bytes (docs/rma.md, "Large messages": it matters
// only between ranks without a mapping of each other's memory).
inline constexpr const char* kCompareSizes = "64:256KiB:8,64KiB,128KiB";
// window's: 8 B to 1 MiB by powers of 2, as the MPI peers' default.
inline constexpr const char* kWindowSizes = "8:1MiB";

struct Args {
  std::string table = "compare";  // compare, loss, width, window
  std::string modes = "safe,raw,p2p";
  std::string sizes;  // compare, window; empty: kCompareSizes, kWindowSizes
  std::string tsv;
  int repeats = 11;
  int pingpongs = 2000;                // per repeat (a quarter at 32 KiB and above)
  std::string stream_bytes = "64MiB";  // per repeat, at most 20000 messages
  uint32_t depth = 32;
  bool background = false;
  // loss and width: the payload of every message (at least 8 bytes: each
  // carries its sequence number), and messages per repeat (loss) or per
  // peer and repeat (width).
  std::string payload = "256";
  uint64_t messages = 20000;
  std::string depths = "2,8,32,128";                             // loss
  std::string paces = "0,500,1000,2000,5000,10000,20000,50000";  // loss, ns between sends
  // Summarise these TSVs (grove's and the MPI peers', bench/peers/
  // mpi_rma_peer.cpp) instead of running.
  std::vector<std::string> from_tsv;
};

constexpr int kTagData = 1;
constexpr int kTagAck = 2;
constexpr int kTagStop = 3;
constexpr int kTagNoise = 4;
constexpr int kTagSync = 5;
constexpr size_t kNoiseBytes = 64 * 1024;

// One measurement. `mode` names the channel and, for the sweeps, the
// setting of the cell ("raw/depth=8/pace_ns=500", "safe/ranks=4") so the
// TSV keeps its six columns.
struct Row {
  std::string mode;
  bool background;
  std::string metric;
  size_t payload;
  int repeat;
  double value;
};

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A comma list of whole numbers in [min, max] for `option`; anything else
// (empty entries, signs, suffixes, out of range) is a usage error naming
// the option and the entry.
std::vector<uint64_t> parse_counts(const std::string& option, const std::string& text, uint64_t min,
                                   uint64_t max);
// One byte count of at least `min` for `option`.
size_t parse_one_size(const std::string& option, const std::string& text, size_t min);

// Ranks 2 and up: pairs ping-pong kNoiseBytes until rank 0 says stop
// (stop_background); an odd rank out only waits for the stop.
void background_traffic(Comm& comm);
void stop_background(Comm& comm);
// Ranks 0 and 1 meet (a barrier of two).
void sync_pair(Comm& comm);

// Rank 0: the raw rows, and the cells (mode, background, payload, metric)
// in the order first measured with their median and 95% CI; `suffix` adds
// text at the end of a cell's line (the path of a ring cell).
void write_tsv(const std::string& path, const std::vector<Row>& rows);
// Rows of a TSV write_tsv (or an MPI peer) wrote, appended to `rows`; a
// file that cannot be read, another header or a malformed row is a usage
// error naming the file and line.
void read_tsv(const std::string& path, std::vector<Row>& rows);
void print_cells(const std::vector<Row>& rows,
                 const std::function<std::string(const Row&)>& suffix = nullptr);

// The options of --table loss and width (the others are compare's, in
// rma_bench.cpp, and shared with the sweeps).
void add_table_options(CLI::App& sub, Args& args);
// Every table: under `grove run -n N`, N >= 2, or a usage error naming the
// table.
void require_two_ranks(Comm& world, const Args& args);

// The table args.table names (rma_bench.cpp); loss and width.
int run(const Args& args);
int run_loss(const Args& args);
int run_width(const Args& args);
int run_window(const Args& args);

}  // namespace grove::tools::rma
