// The MPI side of `grove rma-bench --table window`: put and get latency and
// bandwidth with the MPI library's one-sided calls, rank 0 to rank 1, in
// the same cells and TSV rows as grove's (tools/rma_bench_window.cpp), so
// `grove rma-bench --from-tsv grove.tsv openmpi.tsv mpich.tsv` summarises
// them side by side. Built twice, against Open MPI (grove-rma-peer-openmpi)
// and MPICH (grove-rma-peer-mpich).
//
// One window of the largest payload per rank (MPI_Win_allocate), one
// passive-target epoch from creation to free (MPI_Win_lock_all), as grove's
// windows. Per payload and repeat:
// - latency_us: the mean of --pingpongs MPI_Put + MPI_Win_flush(1) pairs
//   (mode LIB/put), or MPI_Get + MPI_Win_flush(1) (LIB/get: a get's data is
//   there only after the flush);
// - bandwidth_MiBps: min(20000, stream_bytes / payload) puts or gets and
//   one flush, over the time they took (OSU's osu_put_bw/osu_get_bw loop:
//   the gets land in one buffer).
// Each payload is first put, flushed, read back and compared.
//
//   mpirun.openmpi -n 2 grove-rma-peer-openmpi [--sizes 8:1MiB] [--repeats 11]
//       [--pingpongs 2000] [--stream-bytes 67108864] [--tsv FILE]
// --sizes as grove bench's (peer_common's parse_sizes: lists, FROM:TO[:FACTOR],
// suffixes; default 8 B to 1 MiB by powers of 2). Bad arguments:
// a message naming the argument on stderr, exit status 2.

#include <mpi.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "grove/error.hpp"
#include "peer_common.hpp"

#ifndef GROVE_PEER_LIBRARY
#error "GROVE_PEER_LIBRARY must name the MPI library (openmpi, mpich)"
#endif

namespace {

struct Options {
  std::vector<size_t> sizes;
  int repeats = 11;
  int pingpongs = 2000;
  uint64_t stream_bytes = 64ull << 20;
  std::string tsv;
};

struct BadArgument {
  std::string why;
};

uint64_t parse_number(const std::string& option, const std::string& text, uint64_t min) {
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    throw BadArgument{fmt::format("{}: '{}' is not a whole number", option, text)};
  }
  if (value < min) throw BadArgument{fmt::format("{}: {} is below {}", option, value, min)};
  return value;
}

// The payloads of --sizes in `grove bench`'s syntax (as grove rma-bench
// takes them), increasing, none empty.
std::vector<size_t> parse_payloads(const std::string& spec) {
  std::vector<size_t> sizes;
  try {
    sizes = grove::bench::peer::parse_sizes(spec);
  } catch (const grove::Error& e) {
    throw BadArgument{e.what()};
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  if (sizes.empty() || sizes.front() == 0) {
    throw BadArgument{fmt::format("--sizes '{}': a payload of 0 bytes", spec)};
  }
  return sizes;
}

Options parse(int argc, char** argv) {
  Options o;
  o.sizes = parse_payloads("8:1MiB");  // grove rma-bench --table window's default
  for (int i = 1; i < argc; ++i) {
    const std::string option = argv[i];
    if (i + 1 >= argc) throw BadArgument{fmt::format("{}: a value is missing", option)};
    const std::string value = argv[++i];
    if (option == "--sizes") {
      o.sizes = parse_payloads(value);
    } else if (option == "--repeats") {
      o.repeats = static_cast<int>(std::min<uint64_t>(parse_number(option, value, 1), 100000));
    } else if (option == "--pingpongs") {
      o.pingpongs = static_cast<int>(std::min<uint64_t>(parse_number(option, value, 1), 1 << 27));
    } else if (option == "--stream-bytes") {
      o.stream_bytes = parse_number(option, value, 1);
    } else if (option == "--tsv") {
      o.tsv = value;
    } else {
      throw BadArgument{fmt::format("unknown argument '{}'", option)};
    }
  }
  return o;
}

struct Row {
  std::string mode;
  std::string metric;
  size_t payload;
  int repeat;
  double value;
};

// Rank 0: the pattern put to rank 1 comes back by a get.
bool round_trip(MPI_Win win, size_t payload) {
  std::vector<uint8_t> out(payload), back(payload);
  for (size_t i = 0; i < payload; ++i)
    out[i] = static_cast<uint8_t>((i * 13 + payload) & 0xff);
  const int n = static_cast<int>(payload);
  MPI_Put(out.data(), n, MPI_BYTE, 1, 0, n, MPI_BYTE, win);
  MPI_Win_flush(1, win);
  MPI_Get(back.data(), n, MPI_BYTE, 1, 0, n, MPI_BYTE, win);
  MPI_Win_flush(1, win);
  return out == back;
}

void measure(MPI_Win win, const Options& o, size_t payload, std::vector<Row>& rows) {
  const std::string lib = GROVE_PEER_LIBRARY;
  std::vector<uint8_t> buffer(payload, 1);
  const int n = static_cast<int>(payload);
  const uint64_t stream =
      std::max<uint64_t>(1, std::min<uint64_t>(20000, o.stream_bytes / payload));
  const double mib = static_cast<double>(stream * payload) / (1 << 20);
  for (int repeat = 0; repeat < o.repeats; ++repeat) {
    double start = MPI_Wtime();
    for (int i = 0; i < o.pingpongs; ++i) {
      MPI_Put(buffer.data(), n, MPI_BYTE, 1, 0, n, MPI_BYTE, win);
      MPI_Win_flush(1, win);
    }
    rows.push_back(
        {lib + "/put", "latency_us", payload, repeat, (MPI_Wtime() - start) / o.pingpongs * 1e6});
    start = MPI_Wtime();
    for (int i = 0; i < o.pingpongs; ++i) {
      MPI_Get(buffer.data(), n, MPI_BYTE, 1, 0, n, MPI_BYTE, win);
      MPI_Win_flush(1, win);
    }
    rows.push_back(
        {lib + "/get", "latency_us", payload, repeat, (MPI_Wtime() - start) / o.pingpongs * 1e6});
    start = MPI_Wtime();
    for (uint64_t i = 0; i < stream; ++i)
      MPI_Put(buffer.data(), n, MPI_BYTE, 1, 0, n, MPI_BYTE, win);
    MPI_Win_flush(1, win);
    rows.push_back({lib + "/put", "bandwidth_MiBps", payload, repeat, mib / (MPI_Wtime() - start)});
    start = MPI_Wtime();
    for (uint64_t i = 0; i < stream; ++i)
      MPI_Get(buffer.data(), n, MPI_BYTE, 1, 0, n, MPI_BYTE, win);
    MPI_Win_flush(1, win);
    rows.push_back({lib + "/get", "bandwidth_MiBps", payload, repeat, mib / (MPI_Wtime() - start)});
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Options o;
  try {
    o = parse(argc, argv);
  } catch (const BadArgument& e) {
    if (rank == 0)
      std::fprintf(stderr, "grove-rma-peer-%s: %s\n", GROVE_PEER_LIBRARY, e.why.c_str());
    MPI_Finalize();
    return 2;
  }
  if (size < 2) {
    if (rank == 0) {
      std::fprintf(stderr, "grove-rma-peer-%s: run it with 2 or more ranks (this job has %d)\n",
                   GROVE_PEER_LIBRARY, size);
    }
    MPI_Finalize();
    return 2;
  }
  void* base = nullptr;
  MPI_Win win;
  MPI_Win_allocate(static_cast<MPI_Aint>(o.sizes.back()), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                   &win);
  MPI_Win_lock_all(0, win);
  std::vector<Row> rows;
  int failed = 0;
  for (size_t payload : o.sizes) {
    if (rank == 0 && failed == 0) {
      if (!round_trip(win, payload)) {
        std::fprintf(stderr, "grove-rma-peer-%s: %zu B read back differently after a put\n",
                     GROVE_PEER_LIBRARY, payload);
        failed = 1;
      } else {
        measure(win, o, payload, rows);
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);  // the others wait one payload at a time
  }
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  if (rank == 0 && failed == 0) {
    std::string text = "mode\tbackground\tmetric\tpayload\trepeat\tvalue\n";
    for (const Row& r : rows)
      text += fmt::format("{}\t0\t{}\t{}\t{}\t{:.6g}\n", r.mode, r.metric, r.payload, r.repeat,
                          r.value);
    if (o.tsv.empty()) {
      std::fputs(text.c_str(), stdout);
    } else if (FILE* f = std::fopen(o.tsv.c_str(), "w")) {
      std::fputs(text.c_str(), f);
      std::fclose(f);
    } else {
      std::fprintf(stderr, "grove-rma-peer-%s: cannot write %s\n", GROVE_PEER_LIBRARY,
                   o.tsv.c_str());
      failed = 1;
    }
  }
  MPI_Finalize();
  return failed;
}
