#pragma once
// The segment size of a segmented algorithm, derived from its closed form
// (which segment size minimises the pipelined chain?).
//
// Analytically [DER], with a linear gap g(s) = g0 + s G, the segmented chain
// (S + P - 2) g(s) + (P-1) L, S = m / s, is least at
//
//   S* = sqrt((P-2) m G / g0),   s* = sqrt(m g0 / ((P-2) G))
//
// (the Hockney form with g0 = alpha, G = beta). With a measured g the
// optimum is searched: a closed form depends on s only through S = ceil(m/s)
// segments and the segment s = ceil(m/S), so the search runs over S, on a
// geometric grid and then every S around the grid's best.

#include <cstdint>
#include <functional>

namespace grove::model {

struct SegmentChoice {
  uint64_t segment = 0;   // bytes per segment (the whole message when 1 segment)
  uint64_t segments = 1;  // ceil(bytes / segment)
  double time_us = 0;
};

// Minimises `cost(segment)` over segment = ceil(bytes / S), S = 1 ..
// min(bytes, max_segments). Ties go to fewer segments. bytes = 0: one
// segment of 0 bytes.
SegmentChoice best_segment(uint64_t bytes, uint64_t max_segments,
                           const std::function<double(uint64_t segment)>& cost);

// The continuous optimum above (P > 2, g0 > 0, G > 0); 0 otherwise (at P = 2
// one segment is best).
double analytic_pipeline_segments(int ranks, double bytes, double g0_us, double g_us_per_byte);

}  // namespace grove::model
