#pragma once
// The release-radix model (docs/release-radix.md), its optimiser, and a
// pipelined counterpart [DER].
//
// N ranks, M bytes, alpha a hop's latency, c the software cost of one
// forwarded copy, t worker threads sharing that cost, B one link's
// bandwidth. A rank at radix r sends r copies; store and forward:
//
//   T(r) = ceil(log_r N) * (alpha + ceil(r/t) * c + r * M / B)
//   M*   = B * c / t     (below it depth dominates, above it bandwidth)

#include <cstddef>
#include <functional>

namespace grove::model {

struct ReleaseParams {
  double alpha_us = 100;
  double c_us = 25;
  int threads = 8;
  double bandwidth_gbps = 10;  // 10^9 bit/s

  double us_per_byte() const { return 8e-3 / bandwidth_gbps; }
  double crossover_bytes() const { return c_us / threads / us_per_byte(); }  // M* = B c / t
};

// ceil(log_r n) computed exactly: the least d with r^d >= n (0 for n <= 1).
int seed_depth(int n, int r);
// The height of a k-ary heap tree of n ranks: ceil(log_r((r-1) n + 1)) - 1.
int kary_height(int n, int r);

// The model's formula, T(r) (docs/release-radix.md).
double seed_release_us(int n, int r, double bytes, const ReleaseParams& p);

// The pipelined release [DER]: S = ceil(M / s) segments of s bytes down a
// k-ary tree of height d. The first segment pays the store-and-forward cost
// of the model's formula for one segment; each further one adds the per-node
// bottleneck of one segment, the larger of its software and wire costs:
//   T = d * (alpha + ceil(r/t) c + r s/B) + (S - 1) * max(ceil(r/t) c, r s/B)
double pipelined_release_us(int n, int r, double bytes, double segment, const ReleaseParams& p);

struct RadixChoice {
  int radix = 0;
  double time_us = 0;
};

// Minimises cost(r) over r in [2, n-1] (r = 1 for n <= 2: the only tree);
// ties go to the smallest r.
RadixChoice minimise_radix(int n, const std::function<double(int r)>& cost);

}  // namespace grove::model
