#pragma once
// CRC-32C (Castagnoli), the checksum of ring slots, and a copy that computes
// it on the way. On x86-64 with SSE4.2 the crc32 instruction runs three
// independent streams per block (the instruction's latency is three times
// its throughput) and combines them with precomputed shift tables, so the
// checksum keeps up with the copy; elsewhere a table-driven version.
//
// Conventions: `crc` arguments and results are finished values (the
// pre- and post-inversion are applied), so crc32c_extend(crc32c_extend(0, a),
// b) == crc32c of a followed by b, and crc32c_extend(0, "123456789") ==
// 0xe3069283.

#include <cstddef>
#include <cstdint>

namespace grove::rma {

uint32_t crc32c_extend(uint32_t crc, const void* data, size_t length);

// Copies `length` bytes from `src` to `dst` (not overlapping) and returns
// crc32c_extend(crc, src, length).
uint32_t crc32c_copy(uint32_t crc, void* dst, const void* src, size_t length);

// Whether the hardware path is in use (for documentation and tests).
bool crc32c_hardware();

}  // namespace grove::rma
