#include "tuning/verify.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "grove/error.hpp"
#include "suite/runner.hpp"

namespace grove::tuning {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

VerifyReport verify(Comm& comm, Tuning& tuning, const coll::PortModel& model, int top_k,
                    const MeasureOptions& options, bool exhaustive) {
  if (top_k < 1) throw Error(Errc::usage, "--verify K: K must be at least 1");
  VerifyReport report;
  report.ranks = comm.size();
  if (std::find(tuning.grid.ranks.begin(), tuning.grid.ranks.end(), comm.size()) ==
      tuning.grid.ranks.end()) {
    throw Error(Errc::internal,
                fmt::format("verify: the grid has no cells at {} ranks", comm.size()));
  }
  const auto t0 = std::chrono::steady_clock::now();
  for (const std::string& collective : tuning.grid.collectives) {
    for (Cell* cell : cells_at(tuning, collective, comm.size())) {
      const std::vector<Candidate> ranked =
          rank_candidates(collective, cell->ranks, cell->bytes, model);
      const size_t k = std::min(ranked.size(), static_cast<size_t>(top_k));
      std::vector<std::string> specs;
      for (size_t i = 0; i < k; ++i)
        specs.push_back(ranked[i].spec.to_string());
      // One cell's time budget per cell, shared by its candidates: ranking
      // needs medians, not their intervals.
      MeasureOptions share = options;
      share.cell_seconds = options.cell_seconds / static_cast<double>(k);
      share.median_ci = false;
      const std::vector<double> medians =
          measure_specs(comm, collective, cell->bytes, specs, share);
      report.measurements += static_cast<int>(k);
      ++report.cells;
      if (comm.rank() != 0) continue;
      cell->measured.clear();
      double best = kNotMeasured;
      for (size_t i = 0; i < k; ++i) {
        cell->measured.push_back(
            {ranked[i].spec, ranked[i].predicted_us, medians[i], static_cast<int>(i + 1)});
        if (!std::isnan(medians[i]) && (std::isnan(best) || medians[i] < best)) {
          best = medians[i];
          cell->chosen = ranked[i].spec;
        }
      }
    }
  }
  report.seconds = seconds_since(t0);
  if (!exhaustive) return report;

  report.exhaustive = true;
  const auto t1 = std::chrono::steady_clock::now();
  std::vector<bench::CellResult> all;
  for (const std::string& collective : tuning.grid.collectives) {
    bench::RunOptions run;
    run.collectives = {collective};
    run.algorithm = "all";
    for (uint64_t s : collective == "barrier" ? std::vector<uint64_t>{0} : tuning.grid.sizes)
      run.sizes.push_back(static_cast<size_t>(s));
    run.cell_seconds = options.cell_seconds;
    run.warmup = options.warmup;
    run.min_iterations = options.min_iterations;
    run.max_iterations = options.max_iterations;
    for (bench::CellResult& c : bench::run_cells(comm, run))
      all.push_back(std::move(c));
  }
  report.exhaustive_seconds = seconds_since(t1);
  if (comm.rank() != 0) return report;
  for (const bench::CellResult& c : all)
    report.exhaustive_measurements += c.algorithm.find('/') == std::string::npos;
  for (const Cell& cell : tuning.cells) {
    if (cell.ranks != comm.size() || cell.measured.empty()) continue;
    VerifyReport::CellComparison cmp{cell.collective, cell.bytes, cell.chosen.to_string()};
    for (const Measurement& m : cell.measured)
      if (m.spec == cell.chosen) cmp.kept_us = m.median_us;
    const uint64_t moved = measured_bytes(cell.collective, cell.bytes);
    for (const bench::CellResult& c : all) {
      if (c.collective != cell.collective || c.bytes != moved || c.algorithm == "auto" ||
          c.algorithm.find('/') != std::string::npos) {
        continue;
      }
      const double us = c.summary.median * 1e6;
      if (cmp.best.empty() || us < cmp.best_us) {
        cmp.best = c.algorithm;
        cmp.best_us = us;
      }
    }
    report.comparisons.push_back(cmp);
  }
  return report;
}

std::string VerifyReport::text() const {
  std::string out = fmt::format(
      "verify: {} cells at {} ranks, {} measurements (the model's top candidates) in {:.2f} s\n",
      cells, ranks, measurements, seconds);
  if (!exhaustive) return out;
  out += fmt::format(
      "exhaustive (grove bench --algo all over the same cells): {} measurements in {:.2f} s; "
      "tune --verify took {:.1f}% of that ({:.1f}x faster)\n",
      exhaustive_measurements, exhaustive_seconds,
      exhaustive_seconds > 0 ? 100 * seconds / exhaustive_seconds : 0,
      seconds > 0 ? exhaustive_seconds / seconds : 0);
  double log_sum = 0;
  int n = 0;
  const CellComparison* worst = nullptr;
  for (const CellComparison& c : comparisons) {
    if (c.best_us <= 0 || c.kept_us <= 0) continue;
    log_sum += std::log(c.kept_us / c.best_us);
    ++n;
    if (worst == nullptr || c.kept_us / c.best_us > worst->kept_us / worst->best_us) worst = &c;
  }
  if (n > 0) {
    out += fmt::format(
        "kept choice / exhaustive fastest: geometric mean {:.3f} over {} cells; worst {} {} B: "
        "{} {:.3f} us against {} {:.3f} us\n",
        std::exp(log_sum / n), n, worst->collective, worst->bytes, worst->kept, worst->kept_us,
        worst->best, worst->best_us);
  }
  return out;
}

}  // namespace grove::tuning
