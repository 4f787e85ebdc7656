#pragma once
// Ratios between benchmark cells: `grove bench --compare A.tsv B.tsv`
// (before/after of grove itself) and `grove bench --peers` (grove against
// Open MPI, MPICH, Gloo). Each ratio is a ratio of medians with a 95% CI by
// percentile bootstrap (2000 resamples; the 2.5th and 97.5th percentiles of the resampled medians):
// every resample draws both samples with replacement and takes the ratio of their medians; 2000
// resamples; the seed is the CRC-32 of the pair's key, so a table
// regenerates identically from its raw TSVs.

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "core/stats.hpp"
#include "suite/rank_mean.hpp"
#include "suite/tsv.hpp"

namespace grove::bench {

// median(a) / median(b) (NaN when median(b) is 0) with its CI.
Ratio ratio_of_medians(std::span<const double> a, std::span<const double> b, uint64_t seed,
                       int resamples = stats::kBootstrapResamples);

struct SummarizedCell {
  tsv::Cell cell;
  stats::Summary summary;        // seeded by cell.key.text(), as grove bench's table
  std::optional<RankMean> rank;  // OSU's per-rank mean, when the cell has it
};

std::vector<SummarizedCell> summarize(const std::vector<tsv::Cell>& cells);

struct RatioRow {
  tsv::CellKey key;  // the numerator's cell
  std::string a_library, b_library, b_algorithm;
  stats::Summary a, b;
  Ratio ratio;  // of the span medians
  // OSU's per-rank mean of both cells and their ratio, when both cells
  // carry per-rank times; the ratio's bootstrap seed is CRC-32 of
  // "rank mean " + ratio_seed_key.
  std::optional<RankMean> a_rank, b_rank;
  std::optional<Ratio> rank_ratio;
};

// The key that seeds a ratio's bootstrap: "A-lib vs B-lib: <a key> / <b algorithm>".
std::string ratio_seed_key(const RatioRow& row);

struct Comparison {
  std::vector<RatioRow> rows;
  std::vector<tsv::CellKey> only_a, only_b;
};

// --compare: cells matched on (collective, algorithm, ranks, bytes, cadence);
// the library column is ignored. Rows follow A's cell order. Each side must
// hold one library per key (else grove::Error(usage) names the cell).
Comparison compare(const std::vector<tsv::Cell>& a, const std::vector<tsv::Cell>& b);

// --peers: every cell of a library named "grove" or "grove/..." against each
// peer's cell with the same (collective, ranks, bytes, cadence); the peer's
// algorithm ("native") is not matched. Rows are grouped per grove cell, in
// the order of `peers`.
std::vector<RatioRow> compare_with_peers(const std::vector<tsv::Cell>& cells,
                                         const std::vector<std::string>& peers);

bool is_grove_library(std::string_view library);

// "1.23", "n/a" for NaN; ratios print with 3 decimals.
std::string format_ratio(const Ratio& r);

// The --compare table: a header comment and one line per row, then the
// unmatched cells.
void print_comparison(std::FILE* out, const Comparison& comparison, const std::string& a_name,
                      const std::string& b_name);
// The same as a Markdown table (--compare --markdown).
std::string comparison_markdown(const Comparison& comparison, const std::string& a_name,
                                const std::string& b_name);

}  // namespace grove::bench
