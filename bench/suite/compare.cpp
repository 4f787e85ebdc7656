#include "suite/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "grove/error.hpp"

namespace grove::bench {
namespace {

using stats::SplitMix64;

double resampled_median(std::span<const double> samples, SplitMix64& rng,
                        std::vector<double>& draw) {
  draw.resize(samples.size());
  for (auto& d : draw)
    d = samples[rng.below(samples.size())];
  return stats::median(draw);
}

double safe_ratio(double a, double b) {
  return b == 0 ? std::numeric_limits<double>::quiet_NaN() : a / b;
}

}  // namespace

Ratio ratio_of_medians(std::span<const double> a, std::span<const double> b, uint64_t seed,
                       int resamples) {
  if (a.empty() || b.empty()) throw Error(Errc::internal, "ratio of medians of an empty sample");
  Ratio r;
  r.value = safe_ratio(stats::median({a.begin(), a.end()}), stats::median({b.begin(), b.end()}));
  SplitMix64 rng{seed};
  std::vector<double> ratios, draw;
  ratios.reserve(static_cast<size_t>(resamples));
  for (int i = 0; i < resamples; ++i) {
    const double ma = resampled_median(a, rng, draw);
    const double mb = resampled_median(b, rng, draw);
    const double q = safe_ratio(ma, mb);
    if (!std::isnan(q)) ratios.push_back(q);
  }
  if (ratios.empty()) {
    r.ci = {r.value, r.value};
    return r;
  }
  std::sort(ratios.begin(), ratios.end());
  // The 2.5th and 97.5th percentiles as core/stats.cpp takes them (sorted
  // index 49 and 1949 of 2000).
  const auto at = [&](double q) {
    const auto index = static_cast<long>(std::lround(q * static_cast<double>(ratios.size()))) - 1;
    return ratios[static_cast<size_t>(
        std::clamp<long>(index, 0, static_cast<long>(ratios.size()) - 1))];
  };
  r.ci = {at(0.025), at(0.975)};
  return r;
}

std::vector<SummarizedCell> summarize(const std::vector<tsv::Cell>& cells) {
  std::vector<SummarizedCell> out;
  for (const tsv::Cell& c : cells)
    out.push_back({c, stats::summarize(c.samples, c.key.text()), rank_mean(c)});
  return out;
}

std::string ratio_seed_key(const RatioRow& row) {
  return fmt::format("{} vs {}: {} / {}", row.a_library, row.b_library, row.key.text(),
                     row.b_algorithm);
}

namespace {

RatioRow make_row(const tsv::Cell& a, const tsv::Cell& b) {
  RatioRow row;
  row.key = a.key;
  row.a_library = a.library;
  row.b_library = b.library;
  row.b_algorithm = b.key.algorithm;
  row.a = stats::summarize(a.samples, a.key.text());
  row.b = stats::summarize(b.samples, b.key.text());
  row.ratio = ratio_of_medians(a.samples, b.samples, stats::crc32(ratio_seed_key(row)));
  row.a_rank = rank_mean(a);
  row.b_rank = rank_mean(b);
  if (row.a_rank && row.b_rank) {
    row.rank_ratio = ratio_of_rank_means(a, b, stats::crc32("rank mean " + ratio_seed_key(row)));
  }
  return row;
}

std::map<tsv::CellKey, const tsv::Cell*> index_by_key(const std::vector<tsv::Cell>& cells,
                                                      std::string_view side) {
  std::map<tsv::CellKey, const tsv::Cell*> index;
  for (const tsv::Cell& c : cells) {
    auto [it, inserted] = index.try_emplace(c.key, &c);
    if (!inserted) {
      throw Error(Errc::usage,
                  fmt::format("--compare: {} holds cell {} for two libraries ('{}' and '{}'); "
                              "give one library per file",
                              side, c.key.text(), it->second->library, c.library));
    }
  }
  return index;
}

}  // namespace

Comparison compare(const std::vector<tsv::Cell>& a, const std::vector<tsv::Cell>& b) {
  const auto a_index = index_by_key(a, "A");
  const auto b_index = index_by_key(b, "B");
  Comparison result;
  for (const tsv::Cell& c : a) {
    const auto it = b_index.find(c.key);
    if (it == b_index.end())
      result.only_a.push_back(c.key);
    else
      result.rows.push_back(make_row(c, *it->second));
  }
  for (const tsv::Cell& c : b) {
    if (!a_index.count(c.key)) result.only_b.push_back(c.key);
  }
  return result;
}

bool is_grove_library(std::string_view library) {
  return library == "grove" || library.rfind("grove/", 0) == 0;
}

std::vector<RatioRow> compare_with_peers(const std::vector<tsv::Cell>& cells,
                                         const std::vector<std::string>& peers) {
  std::vector<RatioRow> rows;
  for (const tsv::Cell& g : cells) {
    if (!is_grove_library(g.library)) continue;
    for (const std::string& peer : peers) {
      for (const tsv::Cell& p : cells) {
        if (p.library != peer || p.key.collective != g.key.collective ||
            p.key.ranks != g.key.ranks || p.key.bytes != g.key.bytes ||
            p.key.cadence != g.key.cadence) {
          continue;
        }
        rows.push_back(make_row(g, p));
        break;
      }
    }
  }
  return rows;
}

std::string format_ratio(const Ratio& r) {
  if (std::isnan(r.value)) return "n/a";
  return fmt::format("{:.3f} [{:.3f}, {:.3f}]", r.value, r.ci.lo, r.ci.hi);
}

void print_comparison(std::FILE* out, const Comparison& comparison, const std::string& a_name,
                      const std::string& b_name) {
  fmt::print(out,
             "# grove bench --compare: A = {}, B = {}\n"
             "# ratio = median(A) / median(B), below 1: A is faster; 95% CI: percentile bootstrap "
             "of the ratio of medians ({} resamples, seed = CRC-32 of the cell)\n",
             a_name, b_name, stats::kBootstrapResamples);
  fmt::print(out, "{:<15} {:<20} {:>5} {:>9} {:<9} {:>11} {:>11} {:>27} {:>27}\n", "collective",
             "algorithm", "ranks", "bytes", "cadence", "A_us", "B_us", "A/B [95% CI]",
             "rank-mean A/B [95% CI]");
  for (const RatioRow& r : comparison.rows) {
    fmt::print(out, "{:<15} {:<20} {:>5} {:>9} {:<9} {:>11.2f} {:>11.2f} {:>27} {:>27}\n",
               r.key.collective, r.key.algorithm, r.key.ranks, r.key.bytes, r.key.cadence,
               r.a.median * 1e6, r.b.median * 1e6, format_ratio(r.ratio),
               r.rank_ratio ? format_ratio(*r.rank_ratio) : "-");
  }
  for (const auto& k : comparison.only_a)
    fmt::print(out, "# only in A: {}\n", k.text());
  for (const auto& k : comparison.only_b)
    fmt::print(out, "# only in B: {}\n", k.text());
}

std::string comparison_markdown(const Comparison& comparison, const std::string& a_name,
                                const std::string& b_name) {
  std::string md = fmt::format(
      "A = `{}`, B = `{}`; ratio = median(A) / median(B), below 1: A is faster; 95% CI: "
      "percentile bootstrap of the ratio of medians ({} resamples).\n\n"
      "| collective | algorithm | ranks | bytes | cadence | A µs | B µs | A/B [95% CI] | "
      "rank-mean A/B [95% CI] |\n"
      "|---|---|---:|---:|---|---:|---:|---:|---:|\n",
      a_name, b_name, stats::kBootstrapResamples);
  for (const RatioRow& r : comparison.rows) {
    md += fmt::format("| {} | {} | {} | {} | {} | {:.2f} | {:.2f} | {} | {} |\n", r.key.collective,
                      r.key.algorithm, r.key.ranks, r.key.bytes, r.key.cadence, r.a.median * 1e6,
                      r.b.median * 1e6, format_ratio(r.ratio),
                      r.rank_ratio ? format_ratio(*r.rank_ratio) : "-");
  }
  for (const auto& k : comparison.only_a)
    md += fmt::format("\nOnly in A: `{}`", k.text());
  for (const auto& k : comparison.only_b)
    md += fmt::format("\nOnly in B: `{}`", k.text());
  return md + "\n";
}

}  // namespace grove::bench
