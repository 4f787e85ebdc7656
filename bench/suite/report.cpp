#include "suite/report.hpp"

#include <fstream>

#include <fmt/format.h>

#include "core/params.hpp"
#include "grove/error.hpp"

namespace grove::bench {

std::string describe_method(const RunOptions& options, int ranks) {
  const auto& registry = params::Registry::global();
  return fmt::format(
      "# grove bench: {} ranks, cadence {}, wait_policy {}\n"
      "# time per call = last rank's completion - first rank's start (shared CLOCK_MONOTONIC)"
      "{}; median with 95% bootstrap CI (2000 resamples)\n",
      ranks, cadence_name(options.cadence),
      registry.contains("wait_policy") ? registry.get("wait_policy").text : "?",
      options.cadence == Cadence::streaming ? ", averaged over batches of 16 back-to-back calls"
                                            : ", a barrier before each call");
}

void print_table(std::FILE* out, const std::vector<CellResult>& cells) {
  fmt::print(out, "{:<15} {:<20} {:>9} {:>7} {:>11} {:>23} {:>11} {:>11}\n", "collective",
             "algorithm", "bytes", "iters", "median_us", "95% CI (us)", "p5_us", "p95_us");
  for (const CellResult& c : cells) {
    const auto& s = c.summary;
    fmt::print(out, "{:<15} {:<20} {:>9} {:>7} {:>11.2f} {:>23} {:>11.2f} {:>11.2f}\n",
               c.collective, c.algorithm, c.bytes, s.count, s.median * 1e6,
               fmt::format("[{:.2f}, {:.2f}]", s.median_ci.lo * 1e6, s.median_ci.hi * 1e6),
               s.p5 * 1e6, s.p95 * 1e6);
  }
}

void write_tsv(const std::string& path, const std::string& library,
               const std::vector<CellResult>& cells) {
  std::ofstream out(path);
  if (!out) throw Error(Errc::usage, fmt::format("cannot write TSV file '{}'", path));
  out << "library\tcollective\talgorithm\tranks\tbytes\tcadence\titeration\tseconds\n";
  for (const CellResult& c : cells) {
    for (size_t i = 0; i < c.samples.size(); ++i) {
      out << fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}\t{:.9e}\n", library, c.collective, c.algorithm,
                         c.ranks, c.bytes, cadence_name(c.cadence), i, c.samples[i]);
    }
  }
  if (!out) throw Error(Errc::usage, fmt::format("writing TSV file '{}' failed", path));
}

}  // namespace grove::bench
