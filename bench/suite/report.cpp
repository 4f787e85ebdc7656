#include "suite/report.hpp"

#include <fstream>

#include <fmt/format.h>

#include "core/params.hpp"
#include "grove/error.hpp"
#include "suite/rank_mean.hpp"
#include "suite/tsv.hpp"

namespace grove::bench {

std::string describe_method(const RunOptions& options, int ranks) {
  const auto& registry = params::Registry::global();
  return fmt::format("# grove bench: {} ranks, cadence {}{}, wait_policy {}\n# {}\n", ranks,
                     cadence_name(options.cadence), cadence_loop(options.cadence),
                     registry.contains("wait_policy") ? registry.get("wait_policy").text : "?",
                     kMetricsLine);
}

void print_table(std::FILE* out, const std::vector<CellResult>& cells) {
  fmt::print(out, "{:<15} {:<20} {:>9} {:>7} {:>11} {:>23} {:>11} {:>11} {:>13} {:>23} {:>21}\n",
             "collective", "algorithm", "bytes", "iters", "median_us", "95% CI (us)", "p5_us",
             "p95_us", "rank_mean_us", "95% CI (us)", "ranks min..max (us)");
  for (const CellResult& c : cells) {
    const auto& s = c.summary;
    const auto m = rank_mean(tsv::Cell{
        "grove",
        {c.collective, c.algorithm, c.ranks, c.bytes, std::string(cadence_name(c.cadence))},
        c.samples,
        c.rank_samples});
    fmt::print(
        out,
        "{:<15} {:<20} {:>9} {:>7} {:>11.2f} {:>23} {:>11.2f} {:>11.2f} {:>13} {:>23} {:>21}\n",
        c.collective, c.algorithm, c.bytes, s.count, s.median * 1e6,
        fmt::format("[{:.2f}, {:.2f}]", s.median_ci.lo * 1e6, s.median_ci.hi * 1e6), s.p5 * 1e6,
        s.p95 * 1e6, m ? fmt::format("{:.2f}", m->mean * 1e6) : "-",
        m ? fmt::format("[{:.2f}, {:.2f}]", m->ci.lo * 1e6, m->ci.hi * 1e6) : "-",
        m ? fmt::format("{:.2f}..{:.2f}", m->min_rank * 1e6, m->max_rank * 1e6) : "-");
  }
}

void write_tsv(const std::string& path, const std::string& library,
               const std::vector<CellResult>& cells) {
  std::vector<tsv::Cell> pooled;
  for (const CellResult& c : cells) {
    pooled.push_back(
        {library,
         {c.collective, c.algorithm, c.ranks, c.bytes, std::string(cadence_name(c.cadence))},
         c.samples,
         c.rank_samples});
  }
  tsv::write_file(path, tsv::rows_of(pooled));
}

}  // namespace grove::bench
