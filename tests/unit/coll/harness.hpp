#pragma once
// Runs one schedule per rank on a MemoryWorld and checks the result bytes.
// Shared by the collective builder tests in this folder.

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sched/schedule.hpp"
#include "support/memory_world.hpp"

namespace grove::coll::testing {

struct RankIo {
  std::vector<std::byte> input;
  std::vector<std::byte> output;
};

// A deterministic byte for (rank, position, salt): every test can recompute
// what any rank sent.
inline std::byte pattern(int rank, size_t i, uint32_t salt = 0) {
  uint64_t x = (uint64_t{static_cast<uint32_t>(rank)} << 40) ^ (uint64_t{i} * 0x9E3779B97F4A7C15u) ^
               (uint64_t{salt} << 20);
  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9u;
  x ^= x >> 32;
  return static_cast<std::byte>(x & 0xff);
}

inline std::vector<std::byte> pattern_bytes(int rank, size_t length, uint32_t salt = 0,
                                            size_t start = 0) {
  std::vector<std::byte> out(length);
  for (size_t i = 0; i < length; ++i)
    out[i] = pattern(rank, start + i, salt);
  return out;
}

// The transport behaviour a case runs under, varied across cases so the
// whole matrix covers eager, immediate and rendezvous sends and shuffled
// arrival without running every case three times.
MemoryWorld::Options world_options(uint64_t case_hash);

// Runs schedules[r] with io[r] on rank r until every rank is done.
// Returns an empty string on success, else the first error (with the
// world's pending state).
// `inspect`, if given, sees the world after a successful run (statistics).
std::string run_schedules(const std::vector<sched::Schedule>& schedules, std::vector<RankIo>& io,
                          MemoryWorld::Options options,
                          const std::function<void(MemoryWorld&)>& inspect = {});

// Same, building each rank's schedule with `build(rank)`.
std::string run_built(int size, const std::function<sched::Schedule(int)>& build,
                      std::vector<RankIo>& io, MemoryWorld::Options options,
                      const std::function<void(MemoryWorld&)>& inspect = {});

// Index of the first differing byte, or -1.
int64_t first_difference(const std::vector<std::byte>& got, const std::vector<std::byte>& want);

}  // namespace grove::coll::testing
