#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>
#include "rma/crc32c.hpp"
using namespace grove::rma;
int main() {
  std::vector<unsigned char> a(1 << 20), b(1 << 20);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = i * 7;
  for (size_t n : {8192ul, 32768ul, 262144ul}) {
    for (int round = 0; round < 2; ++round) {
      uint32_t c = 0;
      auto t0 = std::chrono::steady_clock::now();
      int reps = 2000;
      for (int r = 0; r < reps; r++)
        c ^= crc32c_extend(c, a.data(), n);
      double crc =
          std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() /
          reps;
      t0 = std::chrono::steady_clock::now();
      for (int r = 0; r < reps; r++) {
        std::memcpy(b.data(), a.data(), n);
        asm volatile("" ::"r"(b.data()) : "memory");
      }
      double mc =
          std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() /
          reps;
      t0 = std::chrono::steady_clock::now();
      for (int r = 0; r < reps; r++)
        c ^= crc32c_copy(c, b.data(), a.data(), n);
      double cc =
          std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() /
          reps;
      printf("%7zu B: crc %7.0f ns (%.1f GB/s)  memcpy %7.0f ns  crc32c_copy %7.0f ns  [%u]\n", n,
             crc, n / crc, mc, cc, c);
    }
  }
}
