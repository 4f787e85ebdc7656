#pragma once
// How a ring slot's payload is copied and checksummed (ring_slot_copy), one
// function per side so the writer (ring_writer.cpp) and the reader
// (ring_reader.cpp, partial copies included) cannot drift apart. Inline:
// they sit on every message's path. Internal to src/rma.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "rma/crc32c.hpp"

namespace grove::rma {

// two_pass: checksum and copy as two passes (over 8 KiB pieces when the
// whole range is checksummed; one memcpy beside the checksum of its first
// bytes when only they are: docs/rma.md "Checksum coverage"); one_pass:
// both at once (crc32c_copy); unchecked (a diagnostic, to measure the
// checksum's share): no checksum, the writer stores CRC 0 and the reader
// checks only the guard and the length.
enum class SlotCopy : uint8_t { two_pass, one_pass, unchecked };

// `n` bytes from `from` to `to`, the CRC extended over the first `checked`:
// of the source (the writer's own buffer) or, `sum_destination`, of what
// arrived (the reader's copy).
inline uint32_t copy_checked(SlotCopy mode, bool sum_destination, uint32_t crc, std::byte* to,
                             const std::byte* from, size_t n, size_t checked) {
  switch (mode) {
    case SlotCopy::unchecked:
      std::memcpy(to, from, n);
      return 0;
    case SlotCopy::one_pass:
      if (checked > 0) crc = crc32c_copy(crc, to, from, checked);
      std::memcpy(to + checked, from + checked, n - checked);
      return crc;
    case SlotCopy::two_pass:
      break;
  }
  if (checked == n) {
    return sum_destination ? copy_then_crc32c(crc, to, from, n)
                           : crc32c_then_copy(crc, to, from, n);
  }
  return sum_destination ? copy_then_crc32c_prefix(crc, to, from, n, checked)
                         : crc32c_prefix_then_copy(crc, to, from, n, checked);
}

// Bytes [at, at + n) of a payload whose CRC covers its first `covered`
// bytes: copied from `message` into the slot's `payload` (the writer
// checksums its own buffer), or from the slot's `payload` into the receive
// buffer `out` (the reader checksums what it received). Returns `crc`
// extended over the covered part of the range (0 for unchecked).
inline uint32_t copy_into_slot(SlotCopy mode, uint32_t crc, std::byte* payload,
                               const std::byte* message, size_t at, size_t n, size_t covered) {
  const size_t checked = at < covered ? std::min(n, covered - at) : 0;
  return copy_checked(mode, false, crc, payload + at, message + at, n, checked);
}
inline uint32_t copy_from_slot(SlotCopy mode, uint32_t crc, std::byte* out,
                               const std::byte* payload, size_t at, size_t n, size_t covered) {
  const size_t checked = at < covered ? std::min(n, covered - at) : 0;
  return copy_checked(mode, true, crc, out + at, payload + at, n, checked);
}

}  // namespace grove::rma
