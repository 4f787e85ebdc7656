#include "tuning/measure.hpp"

#include "suite/cells.hpp"
#include "suite/runner.hpp"

namespace grove::tuning {

std::vector<double> measure_specs(Comm& comm, const std::string& collective, uint64_t bytes,
                                  const std::vector<std::string>& specs,
                                  const MeasureOptions& options) {
  std::vector<double> out;
  for (const std::string& spec : specs) {
    bench::RunOptions run;
    run.collectives = {collective};
    run.algorithm = spec;
    run.sizes = {static_cast<size_t>(bytes)};
    run.cell_seconds = options.cell_seconds;
    run.warmup = options.warmup;
    run.min_iterations = options.min_iterations;
    run.max_iterations = options.max_iterations;
    run.median_ci = options.median_ci;
    const std::vector<bench::CellResult> cells = bench::run_cells(comm, run);
    // The cell itself comes first; a refused spec leaves no cell.
    out.push_back(cells.empty() ? kNotMeasured : cells.front().summary.median * 1e6);
  }
  return out;
}

uint64_t measured_bytes(const std::string& collective, uint64_t bytes) {
  const auto spec = bench::cells::find_spec(collective);
  return spec ? bench::cells::round_bytes(*spec, bytes) : bytes;
}

}  // namespace grove::tuning
