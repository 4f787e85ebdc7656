// The per-rank-count, per-size choices an export writes (export.hpp).

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "tuning/export.hpp"

namespace grove::tuning {
namespace {

// Rank counts an interval of the grid is written for: each of them when the
// interval is narrow enough that per-count rules stay short.
constexpr int kWidestExpanded = 32;

std::vector<int> export_ranks(const std::vector<int>& grid) {
  std::vector<int> out;
  for (size_t i = 0; i < grid.size(); ++i) {
    const int lo = grid[i];
    const int hi = i + 1 < grid.size() ? grid[i + 1] - 1 : lo;
    if (hi - lo + 1 <= kWidestExpanded) {
      for (int n = lo; n <= hi; ++n)
        out.push_back(n);
    } else {
      out.push_back(lo);
    }
  }
  return out;
}

const Cell* find_cell(const Tuning& tuning, const std::string& collective, int ranks,
                      uint64_t bytes) {
  for (const Cell& c : tuning.cells)
    if (c.collective == collective && c.ranks == ranks && c.bytes == bytes) return &c;
  return nullptr;
}

bool same_peer(const PeerAlgorithm& a, const PeerAlgorithm& b) {
  return a.id == b.id && a.name == b.name && a.segsize == b.segsize && a.faninout == b.faninout;
}

}  // namespace

std::vector<ExportCollective> export_plan(const Tuning& tuning, const coll::PortModel& model,
                                          const PeerMapper& map, std::vector<std::string>& notes) {
  std::vector<ExportCollective> out;
  // What has no equivalent: algorithm -> the radices (or segments) seen.
  std::map<std::string, std::set<std::string>> unmapped;
  for (const std::string& collective : tuning.grid.collectives) {
    ExportCollective ec{collective, {}};
    const std::vector<uint64_t> sizes =
        collective == "barrier" ? std::vector<uint64_t>{0} : tuning.grid.sizes;
    bool any_mapped = false;
    for (int n : export_ranks(tuning.grid.ranks)) {
      ExportComm comm{n, {}};
      for (size_t j = 0; j < sizes.size(); ++j) {
        const std::vector<Candidate> ranked = rank_candidates(collective, n, sizes[j], model);
        const Cell* cell = find_cell(tuning, collective, n, sizes[j]);
        const coll::AlgorithmSpec chosen = cell ? cell->chosen : ranked.front().spec;
        ExportRule rule;
        rule.from_bytes = j == 0 ? 0 : sizes[j];
        rule.grove = chosen.to_string();
        rule.algorithm = map(chosen, n);
        rule.predicted_us = predict(chosen, n, sizes[j], model);
        if (!rule.algorithm.exists) {
          unmapped[fmt::format("{} {}", collective, chosen.name)].insert(chosen.to_string());
          for (size_t k = 0; k < ranked.size(); ++k) {
            const PeerAlgorithm p = map(ranked[k].spec, n);
            if (!p.exists) continue;
            rule.why =
                fmt::format("in place of {} (no equivalent), the model's #{}", rule.grove, k + 1);
            rule.grove = ranked[k].spec.to_string();
            rule.algorithm = p;
            rule.predicted_us = ranked[k].predicted_us;
            break;
          }
        }
        if (!rule.algorithm.exists) continue;  // nothing maps: the peer's own rules stay
        any_mapped = true;
        if (!comm.rules.empty() && same_peer(comm.rules.back().algorithm, rule.algorithm)) continue;
        comm.rules.push_back(rule);
      }
      if (!comm.rules.empty()) {
        comm.rules.front().from_bytes = 0;
        ec.comms.push_back(std::move(comm));
      }
    }
    if (any_mapped) out.push_back(std::move(ec));
  }
  for (const auto& [algorithm, specs] : unmapped)
    notes.push_back(fmt::format("{} ({})", algorithm, fmt::join(specs, ", ")));
  return out;
}

}  // namespace grove::tuning
