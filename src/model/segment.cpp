#include "model/segment.hpp"

#include <algorithm>
#include <cmath>

namespace grove::model {
namespace {

// Grid steps of 5%: the exhaustive pass around the grid's best then covers
// the two steps on either side.
constexpr double kGridFactor = 1.05;

}  // namespace

SegmentChoice best_segment(uint64_t bytes, uint64_t max_segments,
                           const std::function<double(uint64_t)>& cost) {
  if (bytes == 0) return {0, 1, cost(0)};
  const uint64_t most = std::max<uint64_t>(1, std::min(bytes, max_segments));
  auto at = [&](uint64_t segments) {
    const uint64_t segment = (bytes + segments - 1) / segments;
    // The segments a segment of that size makes (fewer than asked when the
    // rounding up covers the message sooner).
    const uint64_t actual = (bytes + segment - 1) / segment;
    return SegmentChoice{segment, actual, cost(segment)};
  };
  auto better = [](const SegmentChoice& a, const SegmentChoice& b) {
    return a.time_us < b.time_us || (a.time_us == b.time_us && a.segments < b.segments);
  };
  SegmentChoice best = at(1);
  uint64_t best_grid = 1, previous_grid = 1, next_grid = 1;
  for (double s = 1; s <= static_cast<double>(most);) {
    const auto segments = static_cast<uint64_t>(s);
    const SegmentChoice c = at(segments);
    if (better(c, best)) {
      best = c;
      best_grid = segments;
    }
    const double step = std::max(s * kGridFactor, s + 1);
    s = std::floor(step);
  }
  // The grid points around the best, then every S between them.
  previous_grid =
      std::max<uint64_t>(1, static_cast<uint64_t>(std::floor(static_cast<double>(best_grid) /
                                                             (kGridFactor * kGridFactor))) -
                                1);
  next_grid = std::min<uint64_t>(
      most,
      static_cast<uint64_t>(std::ceil(static_cast<double>(best_grid) * kGridFactor * kGridFactor)) +
          1);
  for (uint64_t segments = previous_grid; segments <= next_grid; ++segments) {
    const SegmentChoice c = at(segments);
    if (better(c, best)) best = c;
  }
  return best;
}

double analytic_pipeline_segments(int ranks, double bytes, double g0_us, double g_us_per_byte) {
  if (ranks <= 2 || g0_us <= 0 || g_us_per_byte <= 0 || bytes <= 0) return 0;
  return std::sqrt((ranks - 2) * bytes * g_us_per_byte / g0_us);
}

}  // namespace grove::model
