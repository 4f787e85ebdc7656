#include "tuning/host_terms.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <span>

#include <fmt/format.h>

#include "coll/shm/group.hpp"
#include "grove/error.hpp"
#include "suite/runner.hpp"

namespace grove::tuning {
namespace {

// The size of the engine's calibrating gather (host_terms.hpp, shm_us).
constexpr uint64_t kShmGatherBytes = 64;
static_assert(kShmGatherBytes > shm::kInlineBytes);

// The median of a gather of `bytes` at N = 2 with `algorithm` forced, in
// us; 0 when the algorithm refuses the call (no segment).
double gather_median_us(Comm& pair, const std::string& algorithm, uint64_t bytes) {
  bench::RunOptions run;
  run.collectives = {"gather"};
  run.algorithm = algorithm;
  run.sizes = {bytes};
  run.cell_seconds = 0.2;
  run.warmup = 100;
  run.median_ci = false;
  const std::vector<bench::CellResult> cells = bench::run_cells(pair, run);
  // Rank 0 holds the cell; a refused algorithm leaves none.
  return cells.empty() ? 0 : cells.front().summary.median * 1e6;
}

}  // namespace

sim::CopyCurve measure_copy_curve(uint64_t max_bytes) {
  using Clock = std::chrono::steady_clock;
  std::vector<std::byte> from(max_bytes, std::byte{1});
  std::vector<std::byte> to(max_bytes, std::byte{0});
  sim::CopyCurve out;
  for (uint64_t bytes = 1; bytes <= max_bytes; bytes *= 4) {
    // Enough repetitions per sample that the clock's own cost is below 1%.
    const int reps = static_cast<int>(std::clamp<uint64_t>((1u << 20) / bytes, 1, 1000));
    std::vector<double> samples;
    for (int s = 0; s < 21; ++s) {
      const auto t0 = Clock::now();
      for (int r = 0; r < reps; ++r) {
        std::memcpy(to.data(), from.data(), bytes);
        // Keeps the copy from being folded away: the next one reads what this wrote.
        from[static_cast<size_t>(r) % bytes] = to[0];
      }
      samples.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() /
                        reps);
    }
    std::nth_element(samples.begin(), samples.begin() + 10, samples.end());
    out.emplace_back(static_cast<double>(bytes), samples[10]);
  }
  return out;
}

HostMeasures measure_host_terms(Comm& pair) {
  HostMeasures out;
  out.schedule_gather_us = gather_median_us(pair, "flat", 1);
  out.shm_gather_us = gather_median_us(pair, "shm", kShmGatherBytes);
  // Rank 0 holds the medians: both ranks go on (to the collective copy
  // measurement) or stop by its word.
  int32_t engine = out.shm_gather_us > 0 ? 1 : 0;
  pair.bcast(std::span(&engine, 1), 0);
  if (engine == 0) {
    out.shm_missing =
        "the pair has no shared-memory segment (shm_collectives off, or hosts differ)";
    return out;
  }
  constexpr uint64_t kMaxCopy = uint64_t{4} << 20;
  out.cross = measure_cross_copies(pair, kMaxCopy);
  if (pair.rank() == 0) {
    out.copy = measure_copy_curve(kMaxCopy);
    // The form's copies at N = 2 (coll/shm/cost.cpp): ci + c + co of the
    // gather's size (a point of every curve: 1 B .. 4 MiB by 4), a curve not
    // measured priced as c.
    auto at = [&](const sim::CopyCurve& curve) {
      for (const auto& [bytes, us] : curve.empty() ? out.copy : curve)
        if (bytes == static_cast<double>(kShmGatherBytes)) return us;
      throw Error(Errc::internal,
                  fmt::format("grove probe: a copy curve has no point at {} B", kShmGatherBytes));
    };
    out.shm_gather_us -= at(out.cross.in) + at(out.copy) + at(out.cross.out);
  }
  return out;
}

}  // namespace grove::tuning
