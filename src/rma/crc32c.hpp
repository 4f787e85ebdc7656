#pragma once
// CRC-32C (Castagnoli), the checksum of ring slots, and a copy that computes
// it on the way. Three ways, the fastest the CPU has chosen at start-up:
// - with AVX-512 and VPCLMULQDQ, from 256 bytes up: the copy moves 64-byte
//   registers and folds them into the checksum with carry-less multiplies
//   (256 bytes per round), so copying and checksumming cost about what a
//   vector copy alone does;
// - with SSE4.2: the crc32 instruction on three independent streams per
//   block (its latency is three times its throughput), combined with
//   precomputed shift tables; 8-byte loads and stores;
// - elsewhere: a table, a byte at a time.
//
// Conventions: `crc` arguments and results are finished values (the
// pre- and post-inversion are applied), so crc32c_extend(crc32c_extend(0, a),
// b) == crc32c of a followed by b, and crc32c_extend(0, "123456789") ==
// 0xe3069283.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace grove::rma {

uint32_t crc32c_extend(uint32_t crc, const void* data, size_t length);

// Copies `length` bytes from `src` to `dst` (not overlapping) and returns
// crc32c_extend(crc, src, length), in one pass.
uint32_t crc32c_copy(uint32_t crc, void* dst, const void* src, size_t length);

// The same in two passes, for copies with one side in memory another core
// writes or reads (a ring slot through a mapping): the cache lines that move
// between cores move in a plain copy (memcpy keeps the most misses in
// flight; a copy that also folds each register into the checksum keeps
// fewer), and the checksum reads the side that is this core's. Both work
// in pieces small enough to stay in the first-level cache between passes.
// crc32c_then_copy: the checksum of `src` (local), then the copy into `dst`.
uint32_t crc32c_then_copy(uint32_t crc, void* dst, const void* src, size_t length);
// copy_then_crc32c: the copy from `src`, then the checksum of `dst` (local):
// the bytes the caller received, whatever `src` held meanwhile.
uint32_t copy_then_crc32c(uint32_t crc, void* dst, const void* src, size_t length);
// The same two with the checksum over the first `checked` bytes only
// (at most `length`) and all `length` bytes copied by one memcpy: the
// checked part copied apart from the rest cost 0.2-0.4 us more per 4-8 KiB
// message between two cores (docs/rma.md "Checksum coverage").
uint32_t crc32c_prefix_then_copy(uint32_t crc, void* dst, const void* src, size_t length,
                                 size_t checked);
uint32_t copy_then_crc32c_prefix(uint32_t crc, void* dst, const void* src, size_t length,
                                 size_t checked);

// How the checksum is computed. crc32c_extend and crc32c_copy use the
// fastest this CPU has (crc32c_path()); the _by forms take one (an
// unsupported one falls back to the table), for tests.
enum class Crc32cPath { table, instruction, fold };
Crc32cPath crc32c_path();
bool crc32c_supported(Crc32cPath path);
std::string_view crc32c_path_name(Crc32cPath path);
uint32_t crc32c_extend_by(Crc32cPath path, uint32_t crc, const void* data, size_t length);
uint32_t crc32c_copy_by(Crc32cPath path, uint32_t crc, void* dst, const void* src, size_t length);

}  // namespace grove::rma
