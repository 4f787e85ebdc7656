#pragma once
// The modes of `grove bench` beyond a plain run, so tools/bench.cpp stays a
// thin command line:
//   --peers openmpi,mpich,gloo -n N   grove and the peers in interleaved rounds
//   --compare A.tsv B.tsv             per-cell ratios A/B with CIs
//   --from-tsv F.tsv...               summarise saved raw samples (with
//                                     --peers: the peer table, nothing is run)
// and the outputs any run can write: --json, --markdown, --plot.

#include <string>
#include <vector>

#include "suite/peer_rounds.hpp"
#include "suite/runner.hpp"
#include "suite/summary.hpp"

namespace grove::bench {

struct ModeArgs {
  std::string peers;                  // comma list
  std::vector<std::string> compare;   // exactly two files
  std::vector<std::string> from_tsv;  // one or more files
  std::string json, markdown, plot;
  std::string tsv;  // --peers: every library's raw samples, settings as '#' lines
  int ranks = 0;    // -n for --peers
  int rounds = 3;
  std::string wait_policies;  // comma list, or "all"
  std::string peer_dir;
  std::string grove_executable;  // of the grove rounds; default: this program
  double job_timeout_seconds = 0;
  bool keep_logs = false;
  std::string background;  // kinds of background load, comma list
};

// --peers, --compare or --from-tsv: this process orchestrates or reads files
// and is not itself a rank of a benchmark job.
bool is_orchestration(const ModeArgs& mode);

// Runs the asked mode; `suite` carries the suite options of the command line
// (collectives, sizes, cadence, cell time, warm-up, iteration limits,
// algorithm). Prints to stdout; returns the exit status.
int run_mode(const ModeArgs& mode, const PeerRunOptions& suite);

// --json / --markdown / --plot of any summary (no-ops when not asked).
void write_outputs(const ModeArgs& mode, const RunSummary& run);

// A plain run's cells as pooled TSV cells of `library`.
std::vector<tsv::Cell> to_tsv_cells(const std::vector<CellResult>& results,
                                    const std::string& library);

// The value of "--wait-policies all": every value of grove's wait_policy.
std::vector<std::string> all_wait_policies();

}  // namespace grove::bench
