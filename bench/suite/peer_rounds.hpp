#pragma once
// `grove bench --peers openmpi,mpich,gloo`: runs grove and each peer driver
// (bench/peers/) as child jobs in interleaved rounds (grove, openmpi, mpich,
// gloo, grove, openmpi, ...) so drift of the machine hits every library
// alike, then pools each library's samples over the rounds and compares.
//
// Every job gets the same cells (collectives, an explicit size list),
// cadence, warm-up and iteration limits; a round's cell budget is the cell
// time divided by the rounds. Each library runs at its defaults for this
// situation (see the settings lines of the output).

#include <string>
#include <vector>

#include "suite/runner.hpp"
#include "suite/summary.hpp"

namespace grove::bench {

struct PeerRunOptions {
  int ranks = 2;
  std::vector<std::string> peers;  // openmpi, mpich, gloo
  int rounds = 3;
  std::vector<std::string> wait_policies;  // grove once per value; empty: its default
  std::string algorithm = "auto";          // grove's --algo
  std::vector<std::string> collectives;    // empty: all
  std::vector<size_t> sizes;
  Cadence cadence = Cadence::isolated;
  double cell_seconds = 0.3;  // per cell over all rounds
  int warmup = 3;
  int min_iterations = 5;
  int max_iterations = 10000;
  bool cpu_time = false;           // grove's jobs get --cpu-time (peers have no such rows)
  double job_timeout_seconds = 0;  // per child job; 0: derived from the cell count
  std::string grove_executable;    // default: this program
  std::string peer_dir;            // default: GROVE_PEER_DIR, then beside grove
  bool keep_logs = false;          // keep the work directory of logs and TSVs
  // With kinds of background load, every contender also runs loaded, right
  // after its quiet job in each round, labelled with kLoadedSuffix.
  std::vector<std::string> background;
};

// What one contender of a round is: a label and how to start it.
struct Contender {
  std::string label;  // TSV library column given to its rows
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::string>> env;
  // Kinds of background load (suite/background.hpp) running during this
  // contender's jobs; empty: a quiet job.
  std::vector<std::string> background;
};

// The library label of a contender's loaded twin: "openmpi" -> "openmpi+bg".
inline constexpr std::string_view kLoadedSuffix = "+bg";

// The peer executables and their launch lines; a peer that cannot run gets
// ran = false and a note saying why.
struct PeerLaunch {
  PeerStatus status;
  Contender contender;
};
PeerLaunch plan_peer(const std::string& name, const PeerRunOptions& options,
                     const std::vector<std::string>& suite_args);

// The suite options every job gets, for one round.
std::vector<std::string> suite_arguments(const PeerRunOptions& options);

// Runs `contenders` for `rounds` rounds, each writing a TSV (`--tsv FILE` is
// appended to its argv) in `work_dir`; returns every row, relabelled with
// its contender's label. A contender whose job fails is dropped from later
// rounds and reported in `failures` (label: reason); a failure of a label
// starting with "grove" is a grove::Error. Progress (round, contender, jobs
// and, given `cells_per_job`, cells done) goes to stderr before each job:
// one rewritten line on a terminal, one line per job otherwise.
std::vector<tsv::Row> run_rounds(const std::vector<Contender>& contenders, int rounds,
                                 const std::string& work_dir, double job_timeout_seconds,
                                 std::vector<std::pair<std::string, std::string>>& failures,
                                 size_t cells_per_job = 0);

// The whole comparison: plans, rounds, pooled cells, settings lines.
RunSummary run_with_peers(const PeerRunOptions& options);

}  // namespace grove::bench
