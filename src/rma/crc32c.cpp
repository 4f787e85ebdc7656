#include "rma/crc32c.hpp"

#include <array>
#include <cstring>

#if defined(__x86_64__)
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

bool detect_hardware() {
  return __builtin_cpu_supports("sse4.2");
}

#else

bool detect_hardware() {
  return false;
}

#endif

const bool kHardware = detect_hardware();

}  // namespace

bool crc32c_hardware() {
  return kHardware;
}

uint32_t crc32c_extend(uint32_t crc, const void* data, size_t length) {
  const auto* src = static_cast<const unsigned char*>(data);
#if defined(__x86_64__)
  if (kHardware) return ~hw_update<false>(~crc, nullptr, src, length);
#endif
  return ~soft_update(~crc, nullptr, src, length);
}

uint32_t crc32c_copy(uint32_t crc, void* dst, const void* src, size_t length) {
  auto* out = static_cast<unsigned char*>(dst);
  const auto* in = static_cast<const unsigned char*>(src);
#if defined(__x86_64__)
  if (kHardware) return ~hw_update<true>(~crc, out, in, length);
#endif
  return ~soft_update(~crc, out, in, length);
}

}  // namespace grove::rma
