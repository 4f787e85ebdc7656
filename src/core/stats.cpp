#include "core/stats.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#include "grove/error.hpp"

namespace grove::stats {
namespace {

double median_in_place(std::vector<double>& v) {
  const size_t n = v.size();
  std::nth_element(v.begin(), v.begin() + n / 2, v.end());
  const double upper = v[n / 2];
  if (n % 2 == 1) return upper;
  const double lower = *std::max_element(v.begin(), v.begin() + n / 2);
  return (lower + upper) / 2;
}

}  // namespace

double percentile_sorted(std::span<const double> sorted, double q) {
  if (sorted.empty()) throw Error(Errc::internal, "percentile of an empty sample");
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t i = static_cast<size_t>(std::floor(pos));
  const size_t j = std::min(i + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(i);
  return sorted[i] + (sorted[j] - sorted[i]) * frac;
}

double median(std::vector<double> samples) {
  if (samples.empty()) throw Error(Errc::internal, "median of an empty sample");
  return median_in_place(samples);
}

Interval bootstrap_median_ci(std::span<const double> samples, uint64_t seed, int resamples) {
  if (samples.empty()) throw Error(Errc::internal, "bootstrap of an empty sample");
  SplitMix64 rng{seed};
  std::vector<double> medians(static_cast<size_t>(resamples));
  std::vector<double> draw(samples.size());
  for (auto& m : medians) {
    for (auto& d : draw)
      d = samples[rng.below(samples.size())];
    m = median_in_place(draw);
  }
  std::sort(medians.begin(), medians.end());
  const auto at = [&](double q) {
    const auto index = static_cast<size_t>(std::lround(q * resamples)) - 1;
    return medians[std::min(index, medians.size() - 1)];
  };
  return {at(0.025), at(0.975)};
}

uint32_t crc32(std::string_view bytes) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k)
        c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t crc = 0xffffffffu;
  for (char ch : bytes)
    crc = table[(crc ^ static_cast<uint8_t>(ch)) & 0xff] ^ (crc >> 8);
  return crc ^ 0xffffffffu;
}

Summary summarize(std::span<const double> samples, std::string_view cell_key) {
  Summary s = describe(samples);
  s.median_ci = bootstrap_median_ci(samples, crc32(cell_key));
  return s;
}

Summary describe(std::span<const double> samples) {
  if (samples.empty()) throw Error(Errc::internal, "summary of an empty sample");
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  Summary s;
  s.count = sorted.size();
  s.min = sorted.front();
  s.max = sorted.back();
  s.p5 = percentile_sorted(sorted, 0.05);
  s.median = percentile_sorted(sorted, 0.5);
  s.p95 = percentile_sorted(sorted, 0.95);
  s.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(s.count);
  s.median_ci = {s.median, s.median};
  return s;
}

}  // namespace grove::stats
