#include "suite/rank_mean.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "grove/error.hpp"

namespace grove::bench {
namespace {

// Each sample's mean over ranks. With every rank holding the same number of
// samples, the mean of these is exactly the mean over ranks of each rank's
// mean, so resampling them resamples the metric.
std::vector<double> sample_means(const tsv::Cell& cell) {
  std::vector<double> means;
  means.reserve(cell.rank_samples.size());
  for (const auto& ranks : cell.rank_samples) {
    double sum = 0;
    for (double t : ranks)
      sum += t;
    means.push_back(sum / static_cast<double>(ranks.size()));
  }
  return means;
}

double mean_of(std::span<const double> values) {
  double sum = 0;
  for (double v : values)
    sum += v;
  return sum / static_cast<double>(values.size());
}

double resampled_mean(std::span<const double> values, stats::SplitMix64& rng) {
  double sum = 0;
  for (size_t i = 0; i < values.size(); ++i)
    sum += values[rng.below(values.size())];
  return sum / static_cast<double>(values.size());
}

double ratio_or_nan(double a, double b) {
  return b == 0 ? std::numeric_limits<double>::quiet_NaN() : a / b;
}

}  // namespace

stats::Interval percentile_interval(std::vector<double>& values) {
  if (values.empty()) return {};
  std::sort(values.begin(), values.end());
  const auto at = [&](double q) {
    const auto index = static_cast<long>(std::lround(q * static_cast<double>(values.size()))) - 1;
    return values[static_cast<size_t>(
        std::clamp<long>(index, 0, static_cast<long>(values.size()) - 1))];
  };
  return {at(0.025), at(0.975)};
}

uint64_t rank_mean_seed(const tsv::Cell& cell) {
  return stats::crc32("rank mean " + cell.key.text());
}

std::optional<RankMean> rank_mean(const tsv::Cell& cell, int resamples) {
  if (!tsv::has_rank_times(cell)) return std::nullopt;
  RankMean m;
  m.count = cell.samples.size();
  const size_t ranks = cell.rank_samples[0].size();
  m.min_rank = std::numeric_limits<double>::infinity();
  m.max_rank = -m.min_rank;
  for (size_t r = 0; r < ranks; ++r) {
    double sum = 0;
    for (const auto& sample : cell.rank_samples)
      sum += sample[r];
    const double rank_mean = sum / static_cast<double>(m.count);
    m.min_rank = std::min(m.min_rank, rank_mean);
    m.max_rank = std::max(m.max_rank, rank_mean);
  }
  const std::vector<double> means = sample_means(cell);
  m.mean = mean_of(means);
  stats::SplitMix64 rng{rank_mean_seed(cell)};
  std::vector<double> draws;
  draws.reserve(static_cast<size_t>(resamples));
  for (int i = 0; i < resamples; ++i)
    draws.push_back(resampled_mean(means, rng));
  m.ci = draws.empty() ? stats::Interval{m.mean, m.mean} : percentile_interval(draws);
  return m;
}

Ratio ratio_of_rank_means(const tsv::Cell& a, const tsv::Cell& b, uint64_t seed, int resamples) {
  if (!tsv::has_rank_times(a) || !tsv::has_rank_times(b)) {
    throw Error(Errc::internal, "ratio of per-rank means of a cell without per-rank times");
  }
  const std::vector<double> ma = sample_means(a), mb = sample_means(b);
  Ratio r;
  r.value = ratio_or_nan(mean_of(ma), mean_of(mb));
  stats::SplitMix64 rng{seed};
  std::vector<double> ratios;
  ratios.reserve(static_cast<size_t>(resamples));
  for (int i = 0; i < resamples; ++i) {
    const double qa = resampled_mean(ma, rng);
    const double q = ratio_or_nan(qa, resampled_mean(mb, rng));
    if (!std::isnan(q)) ratios.push_back(q);
  }
  r.ci = ratios.empty() ? stats::Interval{r.value, r.value} : percentile_interval(ratios);
  return r;
}

}  // namespace grove::bench
