#include "rma/crc32c.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#include <nmmintrin.h>
#endif

namespace grove::rma {
namespace {

constexpr uint32_t kPolynomial = 0x82f63b78;  // CRC-32C, reflected

// The classic byte-at-a-time table: the portable path and the tails.
const std::array<uint32_t, 256>& byte_table() {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k)
        c = (c & 1) ? kPolynomial ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  return table;
}

// The raw register (no inversions) over `length` bytes, copying when `dst`
// is not null.
uint32_t soft_update(uint32_t reg, unsigned char* dst, const unsigned char* src, size_t length) {
  const auto& table = byte_table();
  for (size_t i = 0; i < length; ++i) {
    reg = table[(reg ^ src[i]) & 0xff] ^ (reg >> 8);
    if (dst != nullptr) dst[i] = src[i];
  }
  return reg;
}

#if defined(__x86_64__)

// Three streams of kStripe bytes each per block.
constexpr size_t kStripe = 1024;

__attribute__((target("sse4.2"))) uint32_t hw_zeros(uint32_t reg, size_t bytes) {
  uint64_t r = reg;
  for (size_t i = 0; i < bytes; i += 8)
    r = _mm_crc32_u64(r, 0);
  return static_cast<uint32_t>(r);
}

// shift(reg) = the register after kStripe zero bytes, which is linear in
// reg: the xor of one table entry per byte of reg.
struct ShiftTables {
  uint32_t t[4][256];
};

__attribute__((target("sse4.2"))) const ShiftTables& shift_tables() {
  static const ShiftTables tables = [] {
    ShiftTables s{};
    for (int k = 0; k < 4; ++k) {
      for (uint32_t v = 0; v < 256; ++v)
        s.t[k][v] = hw_zeros(v << (8 * k), kStripe);
    }
    return s;
  }();
  return tables;
}

inline uint32_t shift(const ShiftTables& s, uint32_t reg) {
  return s.t[0][reg & 0xff] ^ s.t[1][(reg >> 8) & 0xff] ^ s.t[2][(reg >> 16) & 0xff] ^
         s.t[3][reg >> 24];
}

template <bool kCopy>
__attribute__((target("sse4.2"))) uint32_t hw_update(uint32_t reg, unsigned char* dst,
                                                     const unsigned char* src, size_t length) {
  const ShiftTables& tables = shift_tables();
  uint64_t a = reg;
  while (length >= 3 * kStripe) {
    uint64_t b = 0, c = 0;
    const unsigned char* s0 = src;
    const unsigned char* s1 = src + kStripe;
    const unsigned char* s2 = src + 2 * kStripe;
    for (size_t i = 0; i < kStripe; i += 8) {
      uint64_t x, y, z;
      std::memcpy(&x, s0 + i, 8);
      std::memcpy(&y, s1 + i, 8);
      std::memcpy(&z, s2 + i, 8);
      if constexpr (kCopy) {
        std::memcpy(dst + i, &x, 8);
        std::memcpy(dst + kStripe + i, &y, 8);
        std::memcpy(dst + 2 * kStripe + i, &z, 8);
      }
      a = _mm_crc32_u64(a, x);
      b = _mm_crc32_u64(b, y);
      c = _mm_crc32_u64(c, z);
    }
    // reg(A B C) = shift(shift(reg(A)) ^ reg0(B)) ^ reg0(C), reg0 from zero.
    a = shift(tables, shift(tables, static_cast<uint32_t>(a)) ^ static_cast<uint32_t>(b)) ^
        static_cast<uint32_t>(c);
    src += 3 * kStripe;
    if constexpr (kCopy) dst += 3 * kStripe;
    length -= 3 * kStripe;
  }
  while (length >= 8) {
    uint64_t x;
    std::memcpy(&x, src, 8);
    if constexpr (kCopy) {
      std::memcpy(dst, &x, 8);
      dst += 8;
    }
    a = _mm_crc32_u64(a, x);
    src += 8;
    length -= 8;
  }
  uint32_t r = static_cast<uint32_t>(a);
  while (length > 0) {
    if constexpr (kCopy) *dst++ = *src;
    r = _mm_crc32_u8(r, *src++);
    --length;
  }
  return r;
}

// x^n mod P for the CRC-32C polynomial P in the normal bit order (bit i is
// the coefficient of x^i), for the folding constants below.
uint32_t x_power_mod(unsigned n) {
  uint64_t r = 1;
  for (unsigned i = 0; i < n; ++i) {
    r <<= 1;
    if (r & (uint64_t{1} << 32)) r ^= 0x11edc6f41ull;
  }
  return static_cast<uint32_t>(r);
}

uint64_t reverse64(uint64_t v) {
  uint64_t r = 0;
  for (int i = 0; i < 64; ++i)
    r |= ((v >> i) & 1) << (63 - i);
  return r;
}

// Folding (the vector path). Sixteen bytes of the stream loaded into a
// 128-bit lane hold, in the reflected order the CRC uses, the polynomial
// whose x^127 coefficient is the lane's bit 0: the low quadword L is the
// x^64..x^127 part, the high quadword H the x^0..x^63 part. Moving the lane
// D bits further down the stream multiplies it by x^D, and modulo P
//   (L x^64 + H) x^D == L (x^(D+63) mod P) x + H (x^(D-1) mod P) x,
// where the extra x is what a carry-less multiply of two reflected 64-bit
// values adds. Each product is below degree 97, so the folded lane is
// XORed into the lane D bits later without changing the CRC of the whole.
// A constant of degree below 32 is a reflected 64-bit operand, bit j the
// coefficient of x^(63 - j).
struct FoldConstants {
  uint64_t by_2048[2];  // four 64-byte registers apart
  uint64_t by_512[2];   // one 64-byte register apart
};

const FoldConstants& fold_constants() {
  static const FoldConstants constants = [] {
    FoldConstants k{};
    k.by_2048[0] = reverse64(x_power_mod(2048 + 63));
    k.by_2048[1] = reverse64(x_power_mod(2048 - 1));
    k.by_512[0] = reverse64(x_power_mod(512 + 63));
    k.by_512[1] = reverse64(x_power_mod(512 - 1));
    return k;
  }();
  return constants;
}

#define GROVE_FOLD_TARGET __attribute__((target("avx512f,vpclmulqdq,sse4.2")))

GROVE_FOLD_TARGET inline __m512i fold(__m512i x, __m512i k, __m512i next) {
  const __m512i lo = _mm512_clmulepi64_epi128(x, k, 0x00);
  const __m512i hi = _mm512_clmulepi64_epi128(x, k, 0x11);
  return _mm512_ternarylogic_epi64(lo, hi, next, 0x96);  // lo ^ hi ^ next
}

template <bool kCopy>
GROVE_FOLD_TARGET inline __m512i load(unsigned char* dst, const unsigned char* src) {
  const __m512i v = _mm512_loadu_si512(src);
  if constexpr (kCopy) _mm512_storeu_si512(dst, v);
  return v;
}

// The raw register over `length` >= kFoldMin bytes: four 64-byte registers
// fold 256 bytes per round, then into one, which folds the remaining whole
// 64-byte blocks; the 64 bytes it ends with have the CRC of everything
// folded into them and go through the crc32 instruction with the tail. The
// starting register is XORed into the first four bytes (a CRC register is
// the XOR of the bytes it has not shifted out yet).
template <bool kCopy>
GROVE_FOLD_TARGET uint32_t fold_update(uint32_t reg, unsigned char* dst, const unsigned char* src,
                                       size_t length) {
  const FoldConstants& c = fold_constants();
  const auto k2048_lo = static_cast<long long>(c.by_2048[0]);
  const auto k2048_hi = static_cast<long long>(c.by_2048[1]);
  const auto k512_lo = static_cast<long long>(c.by_512[0]);
  const auto k512_hi = static_cast<long long>(c.by_512[1]);
  const __m512i k2048 = _mm512_set_epi64(k2048_hi, k2048_lo, k2048_hi, k2048_lo, k2048_hi, k2048_lo,
                                         k2048_hi, k2048_lo);
  const __m512i k512 =
      _mm512_set_epi64(k512_hi, k512_lo, k512_hi, k512_lo, k512_hi, k512_lo, k512_hi, k512_lo);
  __m512i x0 = load<kCopy>(dst, src);
  __m512i x1 = load<kCopy>(dst + 64, src + 64);
  __m512i x2 = load<kCopy>(dst + 128, src + 128);
  __m512i x3 = load<kCopy>(dst + 192, src + 192);
  x0 = _mm512_xor_si512(x0, _mm512_set_epi64(0, 0, 0, 0, 0, 0, 0, static_cast<long long>(reg)));
  size_t done = 256;
  for (; done + 256 <= length; done += 256) {
    x0 = fold(x0, k2048, load<kCopy>(dst + done, src + done));
    x1 = fold(x1, k2048, load<kCopy>(dst + done + 64, src + done + 64));
    x2 = fold(x2, k2048, load<kCopy>(dst + done + 128, src + done + 128));
    x3 = fold(x3, k2048, load<kCopy>(dst + done + 192, src + done + 192));
  }
  __m512i x = fold(fold(fold(x0, k512, x1), k512, x2), k512, x3);
  for (; done + 64 <= length; done += 64)
    x = fold(x, k512, load<kCopy>(dst + done, src + done));
  alignas(64) uint64_t folded[8];
  _mm512_store_si512(folded, x);
  uint64_t r = 0;
  for (uint64_t word : folded)
    r = _mm_crc32_u64(r, word);
  return hw_update<kCopy>(static_cast<uint32_t>(r), dst + done, src + done, length - done);
}

#undef GROVE_FOLD_TARGET

bool detect_fold() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("vpclmulqdq") &&
         __builtin_cpu_supports("sse4.2");
}

bool detect_hardware() {
  return __builtin_cpu_supports("sse4.2");
}

#else

bool detect_hardware() {
  return false;
}
bool detect_fold() {
  return false;
}

#endif

// Folding pays from a few 64-byte blocks up; below, the crc32 instruction's
// three streams (or one) are as fast.
constexpr size_t kFoldMin = 256;

const bool kHardware = detect_hardware();
const bool kFold = kHardware && detect_fold();

uint32_t update(Crc32cPath path, uint32_t reg, unsigned char* dst, const unsigned char* src,
                size_t length) {
#if defined(__x86_64__)
  if (path == Crc32cPath::fold && length >= kFoldMin) {
    return dst != nullptr ? fold_update<true>(reg, dst, src, length)
                          : fold_update<false>(reg, nullptr, src, length);
  }
  if (path != Crc32cPath::table) {
    return dst != nullptr ? hw_update<true>(reg, dst, src, length)
                          : hw_update<false>(reg, nullptr, src, length);
  }
#else
  (void)path;
#endif
  return soft_update(reg, dst, src, length);
}

const Crc32cPath kBest = kFold       ? Crc32cPath::fold
                         : kHardware ? Crc32cPath::instruction
                                     : Crc32cPath::table;

}  // namespace

Crc32cPath crc32c_path() {
  return kBest;
}

bool crc32c_supported(Crc32cPath path) {
  switch (path) {
    case Crc32cPath::table:
      return true;
    case Crc32cPath::instruction:
      return kHardware;
    case Crc32cPath::fold:
      return kFold;
  }
  return false;
}

std::string_view crc32c_path_name(Crc32cPath path) {
  switch (path) {
    case Crc32cPath::table:
      return "table";
    case Crc32cPath::instruction:
      return "crc32 instruction";
    case Crc32cPath::fold:
      return "carry-less multiply folding (AVX-512)";
  }
  return "?";
}

uint32_t crc32c_extend(uint32_t crc, const void* data, size_t length) {
  return ~update(kBest, ~crc, nullptr, static_cast<const unsigned char*>(data), length);
}

uint32_t crc32c_copy(uint32_t crc, void* dst, const void* src, size_t length) {
  return ~update(kBest, ~crc, static_cast<unsigned char*>(dst),
                 static_cast<const unsigned char*>(src), length);
}

// Pieces of the two-pass copies: well inside a 32 KiB first-level cache.
constexpr size_t kPassPiece = 8192;

uint32_t crc32c_prefix_then_copy(uint32_t crc, void* dst, const void* src, size_t length,
                                 size_t checked) {
  crc = crc32c_extend(crc, src, std::min(checked, length));
  std::memcpy(dst, src, length);
  return crc;
}

uint32_t copy_then_crc32c_prefix(uint32_t crc, void* dst, const void* src, size_t length,
                                 size_t checked) {
  std::memcpy(dst, src, length);
  return crc32c_extend(crc, dst, std::min(checked, length));
}

uint32_t crc32c_then_copy(uint32_t crc, void* dst, const void* src, size_t length) {
  auto* out = static_cast<unsigned char*>(dst);
  const auto* in = static_cast<const unsigned char*>(src);
  for (size_t done = 0; done < length;) {
    const size_t n = std::min(kPassPiece, length - done);
    crc = crc32c_extend(crc, in + done, n);
    std::memcpy(out + done, in + done, n);
    done += n;
  }
  return crc;
}

uint32_t copy_then_crc32c(uint32_t crc, void* dst, const void* src, size_t length) {
  auto* out = static_cast<unsigned char*>(dst);
  const auto* in = static_cast<const unsigned char*>(src);
  for (size_t done = 0; done < length;) {
    const size_t n = std::min(kPassPiece, length - done);
    std::memcpy(out + done, in + done, n);
    crc = crc32c_extend(crc, out + done, n);
    done += n;
  }
  return crc;
}

uint32_t crc32c_extend_by(Crc32cPath path, uint32_t crc, const void* data, size_t length) {
  if (!crc32c_supported(path)) path = Crc32cPath::table;
  return ~update(path, ~crc, nullptr, static_cast<const unsigned char*>(data), length);
}

uint32_t crc32c_copy_by(Crc32cPath path, uint32_t crc, void* dst, const void* src, size_t length) {
  if (!crc32c_supported(path)) path = Crc32cPath::table;
  return ~update(path, ~crc, static_cast<unsigned char*>(dst),
                 static_cast<const unsigned char*>(src), length);
}

}  // namespace grove::rma
