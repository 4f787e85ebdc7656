#pragma once
// `grove tune --plogp FILE --report TSV... [--tuning FILE]`: the model
// against measurement, as the Markdown docs/tuning.md quotes
// (scripts/tune-measure.sh makes the TSV with `grove bench --algo all`).
//
// - Fidelity: every measured cell of a modelled algorithm, its predicted
//   time over its measured median; the share within +-20%.
// - Regret: per (collective, ranks, size), the measured median of `auto`
//   (the call as made: with the tuning file when the bench ran with one)
//   over the fastest measured algorithm; geometric mean and worst cell.
//   Also the model's own regret: the measured time of the algorithm it
//   predicts fastest among those measured, over the fastest.
// - Scatter: grove's choice against Open MPI 4.1's fixed scatter rule,
//   predicted everywhere on a grid and measured where the TSVs have both.

#include <string>
#include <vector>

#include "tuning/model_source.hpp"
#include "tuning/state_correction.hpp"

namespace grove::tuning {

// Throws grove::Error naming a TSV that cannot be read. With `correction`,
// fidelity compares each calibrated cell in the machine's state beside it
// (tuning/state_correction.hpp) and also gives the plain share.
//
// `models`: one probe table per state, in the order of the correction's
// reference sets; a calibrated cell is priced with the table of the state
// nearest its own (StateCorrection::nearest). The first is the primary:
// uncalibrated cells, the plain share, regret (medians brought to its
// state) and the scatter section use it. More than one needs `correction`
// with as many reference sets (grove::Error(usage) otherwise).
// `ranks_per_host` (0: every rank on one host) places the benchmarked
// jobs for what `auto` chose (context_from_params).
std::string report_markdown(const std::vector<std::string>& tsv_paths,
                            const std::vector<ModelSource>& models,
                            const StateCorrection* correction = nullptr, int ranks_per_host = 0);
inline std::string report_markdown(const std::vector<std::string>& tsv_paths,
                                   const ModelSource& model,
                                   const StateCorrection* correction = nullptr,
                                   int ranks_per_host = 0) {
  return report_markdown(tsv_paths, std::vector<ModelSource>{model}, correction, ranks_per_host);
}

// Open MPI 4.1's fixed scatter decision (coll/tuned, by communicator size
// and block bytes), as grove's algorithm: "flat" (basic_linear and
// linear_nb send every block from the root) or "binomial".
std::string openmpi_scatter_rule(int ranks, uint64_t block_bytes);

}  // namespace grove::tuning
