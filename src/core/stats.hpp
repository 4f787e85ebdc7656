#pragma once
// Summary statistics for benchmark cells: median, percentiles and a
// percentile-bootstrap 95% confidence interval of the median, resampled with
// a deterministic seed so a table regenerates identically from its raw TSV.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace grove::stats {

// splitmix64: a tiny generator whose output is the same on every platform,
// unlike the standard distributions, so resampling is reproducible anywhere.
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n) by rejection, so no index is favoured.
  size_t below(size_t n) {
    const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do
      x = next();
    while (x >= limit);
    return static_cast<size_t>(x % n);
  }
};

// Linear interpolation between closest ranks (q in [0, 1]); `sorted` must be
// sorted ascending and non-empty.
double percentile_sorted(std::span<const double> sorted, double q);
double median(std::vector<double> samples);

struct Interval {
  double lo = 0;
  double hi = 0;
};

inline constexpr int kBootstrapResamples = 2000;

// 95% CI of the median: `resamples` resamples with replacement, the median
// of each, then the 2.5th and 97.5th percentiles of those medians (sorted
// index 49 and 1949 for 2000 resamples).
Interval bootstrap_median_ci(std::span<const double> samples, uint64_t seed,
                             int resamples = kBootstrapResamples);

// The deterministic seed of a cell: CRC-32 of its key ("bcast/binomial/4096").
uint32_t crc32(std::string_view bytes);

struct Summary {
  size_t count = 0;
  double min = 0, p5 = 0, median = 0, p95 = 0, max = 0, mean = 0;
  Interval median_ci;
};

Summary summarize(std::span<const double> samples, std::string_view cell_key);
// The same without the bootstrap (median_ci collapsed to the median): for
// callers that rank by medians only (grove tune --verify).
Summary describe(std::span<const double> samples);

}  // namespace grove::stats
