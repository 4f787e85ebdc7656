#include "model/radix.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "coll/cost_terms.hpp"
#include "grove/error.hpp"

namespace grove::model {

int seed_depth(int n, int r) {
  if (r < 2 && n > 1) {
    if (r == 1 && n == 2) return 1;
    throw Error(Errc::invalid_argument, fmt::format("release radix {} at {} ranks", r, n));
  }
  int depth = 0;
  for (int64_t reach = 1; reach < n; reach *= r)
    ++depth;
  return depth;
}

int kary_height(int n, int r) {
  return coll::cost::kary_height(n, r);
}

double seed_release_us(int n, int r, double bytes, const ReleaseParams& p) {
  const double hop = p.alpha_us + std::ceil(static_cast<double>(r) / p.threads) * p.c_us +
                     r * bytes * p.us_per_byte();
  return seed_depth(n, r) * hop;
}

double pipelined_release_us(int n, int r, double bytes, double segment, const ReleaseParams& p) {
  const double piece = segment > 0 && segment < bytes ? segment : bytes;
  const double segments = piece > 0 ? std::ceil(bytes / piece) : 1;
  const double software = std::ceil(static_cast<double>(r) / p.threads) * p.c_us;
  const double wire = r * piece * p.us_per_byte();
  return kary_height(n, r) * (p.alpha_us + software + wire) +
         (segments - 1) * std::max(software, wire);
}

RadixChoice minimise_radix(int n, const std::function<double(int)>& cost) {
  if (n <= 2) return RadixChoice{1, cost(1)};
  RadixChoice best{2, cost(2)};
  for (int r = 3; r <= n - 1; ++r) {
    const double t = cost(r);
    if (t < best.time_us) best = RadixChoice{r, t};
  }
  return best;
}

}  // namespace grove::model
