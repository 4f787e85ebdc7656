#pragma once
// OSU's metric of a benchmark cell, beside the suite's span (suite/tsv.hpp):
// each rank's mean time of one blocking call, then the mean over ranks, with
// the fastest and slowest rank's mean. Its 95% CI is a percentile bootstrap
// that resamples whole samples (every rank's time of one call together), so
// the ranks' times of one call stay paired.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/stats.hpp"
#include "suite/tsv.hpp"

namespace grove::bench {

struct Ratio {
  double value = 0;  // a / b; NaN when b is 0
  stats::Interval ci;
};

struct RankMean {
  double mean = 0;                    // mean over ranks of each rank's mean
  double min_rank = 0, max_rank = 0;  // the fastest and the slowest rank's mean
  stats::Interval ci;                 // 95% CI of `mean`
  size_t count = 0;                   // samples
};

// nullopt when the cell has no per-rank times (tsv::has_rank_times). The
// bootstrap's seed is rank_mean_seed(cell).
std::optional<RankMean> rank_mean(const tsv::Cell& cell,
                                  int resamples = stats::kBootstrapResamples);

// The seed of a cell's bootstrap: CRC-32 of "rank mean " + its key.
uint64_t rank_mean_seed(const tsv::Cell& cell);

// mean(a) / mean(b) of the per-rank means, with a 95% CI: each resample draws
// both cells' samples with replacement. Both cells must have per-rank times.
Ratio ratio_of_rank_means(const tsv::Cell& a, const tsv::Cell& b, uint64_t seed,
                          int resamples = stats::kBootstrapResamples);

// The 2.5th and 97.5th percentiles of `values` as the suite takes them
// (sorted index round(q * n) - 1: 49 and 1949 of 2000); sorts `values`.
stats::Interval percentile_interval(std::vector<double>& values);

}  // namespace grove::bench
