#include "suite/runner.hpp"

#include <time.h>

#include <algorithm>

#include <fmt/format.h>

#include "core/params.hpp"
#include "grove/error.hpp"
#include "suite/driver.hpp"

namespace grove::bench {
namespace {

// CLOCK_MONOTONIC is one clock for every process on a host, so stamps taken
// on different ranks can be compared directly.
double monotonic_seconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

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

struct Stamps {
  std::vector<double> start, end;
};

void run_isolated(Comm& comm, Driver& driver, const RunOptions& options, Stamps& stamps) {
  const double budget_end = monotonic_seconds() + options.cell_seconds;
  constexpr int kBatch = 8;
  for (;;) {
    for (int i = 0; i < kBatch; ++i) {
      comm.barrier();
      const double t0 = monotonic_seconds();
      driver.start(comm).wait();
      const double t1 = monotonic_seconds();
      stamps.start.push_back(t0);
      stamps.end.push_back(t1);
    }
    const auto n = static_cast<int>(stamps.start.size());
    const bool more = n < options.min_iterations ||
                      (n < options.max_iterations && monotonic_seconds() < budget_end);
    if (!agree(comm, more)) break;
  }
}

void run_streaming(Comm& comm, Driver& driver, const RunOptions& options, Stamps& stamps) {
  const double budget_end = monotonic_seconds() + options.cell_seconds;
  constexpr int kBatch = 16;
  int calls = 0;
  for (;;) {
    comm.barrier();
    const double t0 = monotonic_seconds();
    for (int i = 0; i < kBatch; ++i)
      driver.start(comm).wait();
    const double t1 = monotonic_seconds();
    calls += kBatch;
    // One sample per batch: its stamps are divided by kBatch at summary time.
    stamps.start.push_back(t0);
    stamps.end.push_back(t1);
    const bool more = calls < options.min_iterations ||
                      (calls < options.max_iterations && monotonic_seconds() < budget_end);
    if (!agree(comm, more)) break;
  }
}

CellResult run_cell(Comm& comm, Driver& driver, const RunOptions& options,
                    const std::string& algorithm, size_t bytes, uint32_t generation) {
  params::ScopedSet force(driver.algorithm_param(), algorithm);
  driver.prepare(comm, bytes, generation);
  driver.start(comm).wait();
  driver.verify(comm);
  for (int i = 0; i < options.warmup; ++i)
    driver.start(comm).wait();

  Stamps stamps;
  if (options.cadence == Cadence::isolated)
    run_isolated(comm, driver, options, stamps);
  else
    run_streaming(comm, driver, options, stamps);

  const auto starts = collect(comm, stamps.start);
  const auto ends = collect(comm, stamps.end);
  CellResult cell;
  cell.collective = driver.name();
  cell.algorithm = algorithm;
  cell.ranks = comm.size();
  cell.bytes = bytes;
  cell.cadence = options.cadence;
  if (comm.rank() != 0) return cell;
  const double per_sample = options.cadence == Cadence::streaming ? 16.0 : 1.0;
  for (size_t i = 0; i < stamps.start.size(); ++i) {
    double first_start = starts[0][i], last_end = ends[0][i];
    for (size_t r = 1; r < starts.size(); ++r) {
      first_start = std::min(first_start, starts[r][i]);
      last_end = std::max(last_end, ends[r][i]);
    }
    cell.samples.push_back((last_end - first_start) / per_sample);
  }
  cell.summary = stats::summarize(
      cell.samples, fmt::format("{}/{}/{}/{}/{}", cell.collective, cell.algorithm, cell.ranks,
                                cell.bytes, cadence_name(cell.cadence)));
  return cell;
}

}  // namespace

std::string_view cadence_name(Cadence cadence) {
  return cadence == Cadence::isolated ? "isolated" : "streaming";
}

std::vector<CellResult> run_cells(Comm& comm, const RunOptions& options,
                                  const std::function<void(size_t, size_t)>& on_cell) {
  struct Planned {
    Driver* driver;
    std::string algorithm;
    size_t bytes;
  };
  auto drivers = all_drivers();
  std::vector<Planned> plan;
  for (const std::string& wanted : options.collectives) {
    const bool known = std::any_of(drivers.begin(), drivers.end(),
                                   [&](const auto& d) { return d->name() == wanted; });
    if (!known)
      throw Error(Errc::usage, fmt::format("grove bench: unknown collective '{}'", wanted));
  }
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
  for (const Planned& p : plan) {
    CellResult cell = run_cell(comm, *p.driver, options, p.algorithm, p.bytes, ++generation);
    if (comm.rank() == 0) {
      results.push_back(std::move(cell));
      if (on_cell) on_cell(results.size(), plan.size());
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
