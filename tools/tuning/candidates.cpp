#include "tuning/candidates.hpp"

#include <algorithm>

#include "model/cost.hpp"
#include "model/segment.hpp"
#include "tuning/explain.hpp"

namespace grove::tuning {
double predict(const coll::AlgorithmSpec& spec, int ranks, uint64_t bytes,
               const coll::PortModel& model) {
  return model::predict_us(spec, ranks, static_cast<double>(bytes), model);
}

std::vector<Candidate> rank_candidates(const std::string& collective, int ranks, uint64_t bytes,
                                       const coll::PortModel& model) {
  std::vector<Candidate> out;
  int order = 0;
  for (const coll::AlgorithmInfo& info : coll::algorithms_of(collective)) {
    ++order;
    if (!info.cost.cost) continue;
    if (info.cannot_run && !info.cannot_run(ranks).empty()) continue;
    // The shared-memory engine: priced only with the host terms, and only
    // where a one-host job's engine takes the call (slots, shm_max_bytes).
    if (!info.schedule) {
      if (!model.copy) continue;
      if (!shm_refusal({collective, ranks, bytes, true}, context_from_params(ranks)).empty())
        continue;
    }
    coll::AlgorithmSpec spec;
    spec.collective = collective;
    spec.name = info.name;
    std::vector<int> radices{0};
    if (info.default_radix > 0) {
      radices.clear();
      const int top = std::min({info.max_radix, kMaxRadix, std::max(ranks, 2)});
      for (int r = std::max(2, info.min_radix); r <= top; ++r)
        radices.push_back(r);
    }
    for (int radix : radices) {
      spec.radix = radix;
      if (info.takes_segment) {
        if (bytes == 0) {
          spec.segment = info.default_segment ? info.default_segment() : 1;
          out.push_back({spec, predict(spec, ranks, bytes, model), order});
          continue;
        }
        const model::SegmentChoice best =
            model::best_segment(bytes, kMaxSegments, [&](uint64_t segment) {
              spec.segment = segment;
              return predict(spec, ranks, bytes, model);
            });
        spec.segment = best.segment;
        out.push_back({spec, best.time_us, order});
        continue;
      }
      out.push_back({spec, predict(spec, ranks, bytes, model), order});
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) {
    // Exact comparison: forms that tie compute the same expression.
    if (a.predicted_us != b.predicted_us) return a.predicted_us < b.predicted_us;
    if (a.order != b.order) return a.order < b.order;
    if (a.spec.radix != b.spec.radix) return a.spec.radix < b.spec.radix;
    return a.spec.segment > b.spec.segment;
  });
  return out;
}

std::vector<std::string> tunable_collectives() {
  std::vector<std::string> out;
  for (const std::string& c : coll::collectives_declared()) {
    int modelled = 0;
    for (const coll::AlgorithmInfo& info : coll::algorithms_of(c))
      modelled += info.cost.cost ? (info.default_radix > 0 ? 2 : 1) : 0;
    if (modelled > 1) out.push_back(c);
  }
  return out;
}

}  // namespace grove::tuning
