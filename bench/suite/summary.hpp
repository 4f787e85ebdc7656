#pragma once
// Summaries of a benchmark run for people and programs: the per-cell table
// against the peers (stdout), the headline counts, `--json`, `--markdown`.
// Input is pooled cells (suite/tsv.hpp), so the same code serves a live run,
// a merge of rounds, and TSVs read back from bench/results/.

#include <cstdio>
#include <string>
#include <vector>

#include "suite/compare.hpp"
#include "suite/tsv.hpp"

namespace grove::bench {

struct PeerStatus {
  std::string name;  // openmpi, mpich, gloo
  bool ran = false;  // false: `note` says why its columns are empty
  std::string note;  // version and settings, or the reason it did not run
};

struct RunSummary {
  std::vector<std::string> settings;  // lines stating method and settings
  std::vector<tsv::Cell> cells;       // every library's pooled samples
  std::vector<PeerStatus> peers;      // in the order asked for
  std::vector<std::string> peer_names() const;
};

// How grove fares against one peer (or "best MPI": per cell the faster of
// openmpi and mpich) under one metric: cells at or below 1, the worst ratio
// and where. `metric` is kSpanMetric (ratio of span medians) or
// kRankMeanMetric (ratio of OSU's per-rank means; only cells where both
// sides carry per-rank times count).
inline constexpr std::string_view kSpanMetric = "span median";
inline constexpr std::string_view kRankMeanMetric = "per-rank mean";
struct Headline {
  std::string grove_library, against, metric;
  size_t cells = 0, at_or_below_one = 0;
  double geometric_mean = 0, worst = 0;
  std::string worst_cell;
};

std::vector<Headline> headlines(const std::vector<tsv::Cell>& cells,
                                const std::vector<std::string>& peers);

// A library's cell run beside background load ("LIB+bg") against the same
// cell of its quiet self ("LIB") from the same run: the slowdown of the span
// median and of the per-rank mean (loaded / quiet, with bootstrap CIs).
struct Slowdown {
  std::string library;  // the quiet label
  tsv::CellKey key;
  double quiet_median = 0, loaded_median = 0;
  Ratio span;
  std::optional<Ratio> rank_mean;
};
std::vector<Slowdown> slowdowns(const std::vector<tsv::Cell>& cells);

// Per grove cell: its median and CI, then per peer its median and the
// ratio grove/peer with its CI; "-" where a peer has no such cell. Without
// peers, the plain per-cell table of every library.
void print_summary(std::FILE* out, const RunSummary& run);
void write_json(const std::string& path, const RunSummary& run);
void write_markdown(const std::string& path, const RunSummary& run);
std::string markdown(const RunSummary& run);

}  // namespace grove::bench
