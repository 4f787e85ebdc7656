#pragma once
// Virtual time of the simulator: integer picoseconds, so event times are
// exact, comparisons are total and two runs of one input agree bit for bit.
// int64 picoseconds cover 106 days of virtual time.

#include <cmath>
#include <cstdint>
#include <limits>

namespace grove::sim {

using Time = int64_t;

inline constexpr Time kPicosPerSecond = 1'000'000'000'000;
inline constexpr Time kPicosPerMicro = 1'000'000;
inline constexpr Time kNever = std::numeric_limits<Time>::max();

inline Time from_seconds(double seconds) {
  return static_cast<Time>(std::llround(seconds * static_cast<double>(kPicosPerSecond)));
}
inline Time from_micros(double micros) {
  return static_cast<Time>(std::llround(micros * static_cast<double>(kPicosPerMicro)));
}
inline double to_seconds(Time t) {
  return static_cast<double>(t) / static_cast<double>(kPicosPerSecond);
}
inline double to_micros(Time t) {
  return static_cast<double>(t) / static_cast<double>(kPicosPerMicro);
}

}  // namespace grove::sim
