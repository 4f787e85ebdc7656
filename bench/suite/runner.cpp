#include "suite/runner.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "core/params.hpp"
#include "grove/error.hpp"
#include "suite/calibration.hpp"
#include "suite/cell_loop.hpp"
#include "suite/driver.hpp"
#include "suite/tsv.hpp"

namespace grove::bench {
namespace {

// Rank 0 decides for everyone: every rank must run the same number of calls.
bool agree(Comm& comm, bool rank0_says) {
  uint8_t flag = rank0_says ? 1 : 0;
  comm.bcast(std::span(&flag, 1), 0);
  return flag != 0;
}

// Every rank's stamps, on rank 0.
std::vector<std::vector<double>> collect(Comm& comm, const std::vector<double>& mine) {
  std::vector<std::vector<double>> all(static_cast<size_t>(comm.size()));
  for (int r = 0; r < comm.size(); ++r) {
    std::vector<double> stamps = r == comm.rank() ? mine : std::vector<double>(mine.size());
    comm.bcast(std::span(stamps), r);
    if (comm.rank() == 0) all[static_cast<size_t>(r)] = std::move(stamps);
  }
  return all;
}

// User + system CPU seconds of this process so far (every thread: a
// progress or watch thread's work counts against the rank that runs it).
double process_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// The suite's timed loop (suite/cell_loop.hpp), shared with the peer
// drivers so that grove and every peer are timed by the same code. With
// cpu_time, each call alone is bracketed by getrusage (the loop's barriers
// and agreements are not counted).
struct LoopOps {
  Comm& comm;
  Driver& driver;
  bool cpu_time = false;
  double cpu_seconds = 0;
  int calls = 0;
  void barrier() { comm.barrier(); }
  void call() {
    if (!cpu_time) {
      driver.call(comm);
      return;
    }
    const double before = process_cpu_seconds();
    driver.call(comm);
    cpu_seconds += process_cpu_seconds() - before;
    ++calls;
  }
  bool agree(bool rank0_says) { return bench::agree(comm, rank0_says); }
};

// The cell's samples summarised; the bootstrap's seed is the cell's key.
stats::Summary summary_of(const CellResult& cell, bool median_ci) {
  if (!median_ci) return stats::describe(cell.samples);
  return stats::summarize(cell.samples,
                          fmt::format("{}/{}/{}/{}/{}", cell.collective, cell.algorithm, cell.ranks,
                                      cell.bytes, cadence_name(cell.cadence)));
}

// The cell's result, then (rank 0) one row per side measurement of the driver.
std::vector<CellResult> run_cell(Comm& comm, Driver& driver, const RunOptions& options,
                                 const std::string& algorithm, size_t bytes, uint32_t generation) {
  params::ScopedSet force(driver.algorithm_param(), algorithm);
  driver.prepare(comm, bytes, generation);
  driver.call(comm);
  driver.verify(comm);
  for (int i = 0; i < options.warmup; ++i)
    driver.call(comm);

  Stamps stamps;
  LoopOps ops{comm, driver, options.cpu_time};
  LoopLimits limits;
  limits.streaming = options.cadence == Cadence::streaming;
  limits.barrier_after = options.cadence == Cadence::barrier_after;
  limits.cell_seconds = options.cell_seconds;
  limits.min_iterations = options.min_iterations;
  limits.max_iterations = options.max_iterations;
  driver.clear_side_samples();
  time_cell(ops, limits, stamps);
  auto side = driver.side_samples(comm);
  if (options.cpu_time) {
    // One sample per rank: that rank's mean CPU seconds per call.
    const std::vector<double> mine = {ops.calls ? ops.cpu_seconds / ops.calls : 0.0};
    std::vector<double> per_rank;
    for (const auto& one : collect(comm, mine)) {
      if (!one.empty()) per_rank.push_back(one.front());
    }
    side.emplace_back("cpu_per_call", std::move(per_rank));
  }

  const auto starts = collect(comm, stamps.start);
  const auto ends = collect(comm, stamps.end);
  CellResult cell;
  cell.collective = driver.name();
  cell.algorithm = algorithm;
  cell.ranks = comm.size();
  cell.bytes = bytes;
  cell.cadence = options.cadence;
  if (comm.rank() != 0) return {cell};
  cell.samples = iteration_times(starts, ends, limits.streaming);
  cell.rank_samples = rank_times(starts, ends, limits.streaming);
  cell.summary = summary_of(cell, options.median_ci);
  std::vector<CellResult> out{cell};
  for (auto& [label, samples] : side) {
    if (samples.empty()) continue;
    CellResult extra = cell;
    extra.algorithm = algorithm + "/" + label;
    extra.samples = std::move(samples);
    extra.rank_samples.clear();
    extra.summary = summary_of(extra, options.median_ci);
    out.push_back(std::move(extra));
  }
  return out;
}

}  // namespace

std::string_view cadence_name(Cadence cadence) {
  switch (cadence) {
    case Cadence::isolated:
      return "isolated";
    case Cadence::barrier_after:
      return "barrier-after";
    case Cadence::streaming:
      return "streaming";
  }
  return "?";
}

std::string_view cadence_loop(Cadence cadence) {
  switch (cadence) {
    case Cadence::isolated:
      return ", a barrier before each call";
    case Cadence::barrier_after:
      return ", a barrier after each call (OSU's loop)";
    case Cadence::streaming:
      return ", averaged over batches of 16 back-to-back calls";
  }
  return "";
}

Cadence parse_cadence(std::string_view text) {
  if (text == "isolated") return Cadence::isolated;
  if (text == "barrier-after") return Cadence::barrier_after;
  if (text == "streaming") return Cadence::streaming;
  throw Error(Errc::usage,
              fmt::format("--cadence '{}': isolated, barrier-after or streaming", text));
}

void check_options(const RunOptions& options) {
  const auto drivers = all_drivers();
  for (const std::string& wanted : options.collectives) {
    const bool known = std::any_of(drivers.begin(), drivers.end(),
                                   [&](const auto& d) { return d->name() == wanted; });
    if (!known)
      throw Error(Errc::usage, fmt::format("grove bench: unknown collective '{}'", wanted));
  }
  if (options.algorithm == "all") return;
  // The registry judges the name (auto included) exactly as each cell will
  // set it; set and restored at once.
  for (const auto& driver : drivers) {
    if (!options.collectives.empty() &&
        std::find(options.collectives.begin(), options.collectives.end(), driver->name()) ==
            options.collectives.end()) {
      continue;
    }
    try {
      params::ScopedSet probe(driver->algorithm_param(), options.algorithm);
    } catch (const Error& e) {
      throw Error(Errc::usage, fmt::format("grove bench: --algo '{}' for {}: {}", options.algorithm,
                                           driver->name(), e.what()));
    }
  }
}

std::vector<CellResult> run_cells(Comm& comm, const RunOptions& options,
                                  const std::function<void(size_t, size_t)>& on_cell) {
  struct Planned {
    Driver* driver;
    std::string algorithm;
    size_t bytes;
  };
  check_options(options);
  auto drivers = all_drivers();
  std::vector<Planned> plan;
  for (auto& driver : drivers) {
    if (!options.collectives.empty() &&
        std::find(options.collectives.begin(), options.collectives.end(), driver->name()) ==
            options.collectives.end()) {
      continue;
    }
    std::vector<std::string> algorithms;
    if (options.algorithm == "all") {
      algorithms = driver->algorithms(comm.size());
      algorithms.push_back("auto");
    } else {
      algorithms = {options.algorithm};
    }
    std::vector<size_t> sizes;
    for (size_t s : options.sizes) {
      const size_t rounded = driver->round_bytes(s);
      if (std::find(sizes.begin(), sizes.end(), rounded) == sizes.end()) sizes.push_back(rounded);
    }
    for (const auto& algorithm : algorithms) {
      for (size_t bytes : sizes)
        plan.push_back({driver.get(), algorithm, bytes});
    }
  }
  std::vector<CellResult> results;
  uint32_t generation = 0;
  size_t done = 0;
  const bool calibrating = !options.calibration_path.empty();
  for (const Planned& p : plan) {
    std::vector<CellResult> cells;
    std::map<size_t, double> before, after;
    try {
      for (int attempt = 0;; ++attempt) {
        if (calibrating) before = calibrate(comm);
        cells = run_cell(comm, *p.driver, options, p.algorithm, p.bytes, ++generation);
        if (!calibrating) break;
        after = calibrate(comm);
        if (attempt >= options.calibration_retries) break;
        // Rank 0 alone has the ping-pongs: its verdict decides for all.
        uint8_t again = state_changed(before, after) ? 1 : 0;
        comm.bcast(std::span<uint8_t>(&again, 1), 0);
        if (!again) break;
        if (comm.rank() == 0)
          fmt::print(stderr, "grove bench: the machine changed state during {} {} B: again\n",
                     p.algorithm, p.bytes);
      }
    } catch (const Error& e) {
      // A forced algorithm that cannot run this cell (shm for a message too
      // large for its slots, say) is refused by every rank alike before
      // anything is sent: the cell is skipped, with the reason.
      if (e.code() != Errc::invalid_argument ||
          std::string_view(e.what()).find("cannot run this call") == std::string_view::npos) {
        throw;
      }
      if (comm.rank() == 0) fmt::print(stderr, "grove bench: skipped: {}\n", e.what());
      ++done;
      continue;
    }
    ++done;
    if (calibrating) {
      if (comm.rank() == 0 && !cells.empty()) {
        const CellResult& c = cells.front();
        const std::string key = tsv::CellKey{c.collective, c.algorithm, c.ranks, c.bytes,
                                             std::string(cadence_name(c.cadence))}
                                    .text();
        std::vector<CalibrationRow> rows;
        for (const auto& [bytes, us] : before)
          rows.push_back({key, "before", bytes, us});
        for (const auto& [bytes, us] : after)
          rows.push_back({key, "after", bytes, us});
        append_calibration(options.calibration_path, rows);
      }
    }
    if (comm.rank() == 0) {
      for (CellResult& cell : cells)
        results.push_back(std::move(cell));
      if (on_cell) on_cell(done, plan.size());
    }
  }
  return results;
}

std::vector<size_t> parse_sizes(std::string_view spec) {
  std::vector<size_t> sizes;
  size_t pos = 0;
  while (pos <= spec.size()) {
    const size_t comma = std::min(spec.find(',', pos), spec.size());
    const std::string_view part = spec.substr(pos, comma - pos);
    pos = comma + 1;
    if (part.empty()) throw Error(Errc::usage, fmt::format("--sizes '{}': empty entry", spec));
    std::vector<std::string_view> fields;
    size_t f = 0;
    while (f <= part.size()) {
      const size_t colon = std::min(part.find(':', f), part.size());
      fields.push_back(part.substr(f, colon - f));
      f = colon + 1;
    }
    const std::string what = fmt::format("--sizes entry '{}'", part);
    try {
      if (fields.size() == 1) {
        sizes.push_back(params::parse_bytes(fields[0], what));
        continue;
      }
      if (fields.size() > 3) throw Error(Errc::usage, what + ": expected FROM:TO[:FACTOR]");
      const uint64_t from = params::parse_bytes(fields[0], what);
      const uint64_t to = params::parse_bytes(fields[1], what);
      const uint64_t factor = fields.size() == 3 ? params::parse_bytes(fields[2], what) : 2;
      if (factor < 2 || from == 0 || from > to) {
        throw Error(Errc::usage, what + ": needs 0 < FROM <= TO and FACTOR >= 2");
      }
      for (uint64_t s = from; s <= to; s *= factor) {
        sizes.push_back(s);
        if (s > UINT64_MAX / factor) break;
      }
    } catch (const Error& e) {
      if (e.code() == Errc::usage) throw;
      throw Error(Errc::usage, e.what());
    }
  }
  return sizes;
}

}  // namespace grove::bench
