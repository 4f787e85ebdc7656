#include "tuning/state_correction.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "grove/error.hpp"
#include "suite/calibration.hpp"

namespace grove::tuning {
namespace {

struct LogMean {
  double sum = 0;
  int n = 0;
  void add(double v) {
    sum += std::log(v);
    ++n;
  }
  double value() const { return std::exp(sum / n); }
};

}  // namespace

StateCorrection::StateCorrection(const std::string& cells_path,
                                 const std::vector<std::vector<std::string>>& reference_sets) {
  if (reference_sets.empty() ||
      std::any_of(reference_sets.begin(), reference_sets.end(),
                  [](const std::vector<std::string>& set) { return set.empty(); })) {
    throw Error(Errc::usage,
                "--calibration needs --calibration-ref: the calibrations taken around the probe "
                "(and each --state table needs its own)");
  }
  for (const std::vector<std::string>& set : reference_sets) {
    std::map<size_t, LogMean> pooled;
    for (const std::string& path : set)
      for (const bench::CalibrationRow& r : bench::read_calibration(path))
        pooled[r.bytes].add(r.one_way_us);
    std::map<size_t, double>& reference = references_.emplace_back();
    for (const auto& [bytes, mean] : pooled)
      reference[bytes] = mean.value();
  }

  // A cell's later rows replace its earlier ones (a file appended to by
  // several runs describes the last run of each cell).
  std::map<std::string, std::map<std::string, std::map<size_t, double>>> rows;
  for (const bench::CalibrationRow& r : bench::read_calibration(cells_path))
    rows[r.cell][r.moment][r.bytes] = r.one_way_us;
  for (const auto& [cell, moments] : rows) {
    CellState state;
    std::map<size_t, LogMean> sizes;
    for (const auto& [moment, values] : moments)
      for (const auto& [bytes, us] : values)
        sizes[bytes].add(us);
    for (const auto& [bytes, mean] : sizes) {
      for (size_t t = 0; t < references_.size(); ++t) {
        if (!references_[t].contains(bytes)) {
          throw Error(Errc::usage,
                      fmt::format("calibration of cell {} in '{}' has {} B, the reference{} has "
                                  "no ping-pong of that size",
                                  cell, cells_path, bytes,
                                  references_.size() > 1 ? fmt::format(" of table {}", t) : ""));
        }
      }
      state.one_way_us[bytes] = mean.value();
    }
    const auto before = moments.find("before"), after = moments.find("after");
    if (before != moments.end() && after != moments.end())
      state.changed = bench::state_changed(before->second, after->second);
    cells_[cell] = std::move(state);
  }
}

const CellState* StateCorrection::state(const std::string& cell) const {
  const auto it = cells_.find(cell);
  return it == cells_.end() ? nullptr : &it->second;
}

size_t StateCorrection::nearest(const std::string& cell) const {
  const CellState* s = state(cell);
  if (s == nullptr) return 0;
  size_t best = 0;
  double best_distance = 0;
  for (size_t t = 0; t < references_.size(); ++t) {
    double distance = 0;
    for (const auto& [bytes, us] : s->one_way_us)
      distance += std::abs(std::log(us / references_[t].at(bytes)));
    if (t == 0 || distance < best_distance) {
      best = t;
      best_distance = distance;
    }
  }
  return best;
}

std::optional<double> StateCorrection::factor(const std::string& cell, uint64_t bytes) const {
  return factor(cell, bytes, nearest(cell));
}

std::optional<double> StateCorrection::factor(const std::string& cell, uint64_t bytes,
                                              size_t table) const {
  const CellState* s = state(cell);
  if (s == nullptr || s->one_way_us.empty()) return std::nullopt;
  const std::map<size_t, double>& reference = references_.at(table);
  const auto& [small, small_us] = *s->one_way_us.begin();
  const auto& [large, large_us] = *s->one_way_us.rbegin();
  const double log_small = std::log(small_us / reference.at(small));
  const double log_large = std::log(large_us / reference.at(large));
  if (large == small) return std::exp(log_small);
  const double m = static_cast<double>(std::max<uint64_t>(bytes, 1));
  const double t = std::clamp(std::log(m / static_cast<double>(small)) /
                                  std::log(static_cast<double>(large) / static_cast<double>(small)),
                              0.0, 1.0);
  return std::exp((1 - t) * log_small + t * log_large);
}

}  // namespace grove::tuning
