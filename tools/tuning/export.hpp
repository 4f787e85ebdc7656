#pragma once
// `grove tune --export openmpi|mpich FILE`: the tuning's choices as the
// peer libraries' own tuning files, with grove's algorithms mapped to
// theirs (peer_map.cpp says which map and which have no equivalent).
//
//   Open MPI 4.x coll/tuned dynamic rules file: used with
//     --mca coll_tuned_use_dynamic_rules 1
//     --mca coll_tuned_dynamic_rules_filename FILE
//   MPICH 4.x collective selection (CSEL) JSON: FILE for
//     MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE, and FILE's CH4 companion
//     (".ch4.json") for MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE, which
//     selects nothing so that every collective reaches FILE's algorithms
//     (MPICH's default CH4 table would send small communicators on one node
//     to its node-aware compositions instead).
//
// Where a cell's choice has no equivalent, the export takes the model's
// fastest candidate that has one, and says so in a comment.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tuning/tune.hpp"

namespace grove::tuning {

// One algorithm of a peer library.
struct PeerAlgorithm {
  bool exists = false;
  int id = 0;               // Open MPI's algorithm number
  std::string name;         // Open MPI's name, or MPICH's container ("MPIR_Bcast_intra_binomial")
  int faninout = 0;         // Open MPI rules file: fan-in/out
  uint64_t segsize = 0;     // Open MPI rules file: segment size in bytes
  std::string approximate;  // when the peer's algorithm is not quite grove's: how it differs
};

// Maps one grove spec at `ranks` ranks to the peer's algorithm (exists =
// false: no equivalent; `approximate` says why when it is close).
using PeerMapper = std::function<PeerAlgorithm(const coll::AlgorithmSpec& spec, int ranks)>;

PeerAlgorithm openmpi_algorithm(const coll::AlgorithmSpec& spec, int ranks, int knomial_radix);
PeerAlgorithm mpich_algorithm(const coll::AlgorithmSpec& spec, int ranks);

// Every grove algorithm (with the radices/segments it takes) and what each
// peer maps it to: the table docs/tuning.md shows.
std::string mapping_table_markdown();

struct ExportRule {
  uint64_t from_bytes = 0;  // grove's measure (docs/selection.md), from this size up
  PeerAlgorithm algorithm;
  std::string grove;  // the grove spec it stands for
  std::string why;    // "" or why another than the cell's choice
  double predicted_us = 0;
};
struct ExportComm {
  int ranks = 0;  // from this many ranks up (to the next)
  std::vector<ExportRule> rules;
};
struct ExportCollective {
  std::string collective;
  std::vector<ExportComm> comms;
};

// The per-rank-count, per-size choices for a peer. Rank counts: every N of
// each grid interval when it is at most 32 wide, else the interval's first;
// a cell of `tuning` (verified or not) gives the choice where it exists,
// the model's ranking elsewhere. Consecutive sizes with the same peer
// algorithm merge. `notes` collects what has no equivalent.
std::vector<ExportCollective> export_plan(const Tuning& tuning, const coll::PortModel& model,
                                          const PeerMapper& map, std::vector<std::string>& notes);

// Files. Open MPI: one text. MPICH: {main JSON, CH4 JSON}. `knomial_radix`
// (Open MPI: one bcast k-nomial radix per job, coll_tuned_bcast_knomial_radix)
// is chosen by export_openmpi from the rows.
struct ExportFiles {
  std::vector<std::pair<std::string, std::string>> files;  // (path, text)
  std::string usage;                                       // how to run a program with them
};
ExportFiles export_openmpi(const Tuning& tuning, const coll::PortModel& model,
                           const std::string& path);
ExportFiles export_mpich(const Tuning& tuning, const coll::PortModel& model,
                         const std::string& path);

}  // namespace grove::tuning
