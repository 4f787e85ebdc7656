#pragma once
// The packed form of a RecvQueue's receives (recv_queue.hpp), shared by the
// code that writes and reads it (recv_queue.cpp) and the code that takes a
// receive out of the middle (recv_queue_take.cpp). Internal to the queue.

#include <cstdint>
#include <vector>

#include "transport/tag.hpp"
#include "transport/transport.hpp"

namespace grove::sim::packed {

// An entry's flag byte: which fields differ from the previous receive.
// kNextChannel: the tag is the previous one's on the next channel (a
// ring's receives), so it needs no integer. kRun alone: a run of repeats,
// its count (>= 1) follows.
inline constexpr uint8_t kContext = 1, kData = 2, kCapacity = 4, kDone = 8, kTag = 16,
                         kNextChannel = 32;
inline constexpr uint8_t kRun = 64;
// kNear: a repeat but for its capacity, which differs from the previous
// receive's by the zigzag integer in the low 7 bits (an allgatherv's
// blocks differ by a few bytes from one to the next): one byte.
inline constexpr uint8_t kNear = 128;

// Differences as zigzag integers: small either way round, small encoding.
inline uint64_t zigzag(uint64_t difference) {
  const auto d = static_cast<int64_t>(difference);
  return (static_cast<uint64_t>(d) << 1) ^ static_cast<uint64_t>(d >> 63);
}
inline uint64_t unzigzag(uint64_t z) {
  return (z >> 1) ^ (~(z & 1) + 1);
}

inline Tag next_channel(Tag t) {
  return tag::with_channel(t, tag::channel(t) + 1);
}

// A variable-length integer, 7 bits a byte, low first; `at` moves past it.
inline uint64_t get(const std::vector<uint8_t>& in, uint32_t& at) {
  uint64_t v = 0;
  for (int shift = 0;; shift += 7) {
    const uint8_t byte = in[at++];
    v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (byte < 0x80) return v;
  }
}

inline void put(std::vector<uint8_t>& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<uint8_t>(v));
}

}  // namespace grove::sim::packed
