#pragma once
// `--plot FILE.svg|png`: time per call against size, log-log, one line per
// library and algorithm with its 95% CI as a band, drawn by gnuplot
// (scripts/deps.sh installs gnuplot-nox).

#include <string>
#include <vector>

#include "suite/tsv.hpp"

namespace grove::bench {

// The gnuplot script for one figure: `cells` of one (collective, ranks,
// cadence); cells of 0 bytes are left out (no place on a log axis).
std::string gnuplot_script(const std::vector<tsv::Cell>& cells, const std::string& output,
                           const std::string& title);

// One figure per (collective, ranks, cadence). With one figure it is `path`;
// with several, `path` with "-<collective>-n<ranks>-<cadence>" before the
// extension. Returns the files written. Throws grove::Error(usage) for an
// extension other than .svg/.png, or if gnuplot is missing or fails.
std::vector<std::string> write_plots(const std::string& path, const std::vector<tsv::Cell>& cells);

}  // namespace grove::bench
