// Multi-process driver for the test that grove's bytes cross the emulated
// cluster's links (tests/cluster/): one bcast of SIZE bytes from rank 0,
// checked byte for byte on every rank, between two barriers.
//
//   mp_bcast_bytes SIZE
//
// Prints "bcast_bytes ok: N ranks, SIZE bytes" on rank 0 and exits 0; exits 3
// on a wrong byte, 1 on a grove::Error.

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "grove/grove.hpp"

namespace {

unsigned char pattern(size_t i) {
  return static_cast<unsigned char>((i * 131 + (i >> 9)) & 0xff);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: mp_bcast_bytes SIZE\n");
    return 2;
  }
  const size_t size = std::strtoull(argv[1], nullptr, 10);
  try {
    grove::Session session;
    grove::Comm& world = session.world();
    std::vector<unsigned char> buffer(size, 0);
    if (world.rank() == 0)
      for (size_t i = 0; i < size; ++i)
        buffer[i] = pattern(i);
    world.barrier();
    world.bcast(std::span(buffer), 0);
    for (size_t i = 0; i < size; ++i) {
      if (buffer[i] != pattern(i)) {
        std::fprintf(stderr, "mp_bcast_bytes: rank %d: byte %zu is %u, expected %u\n", world.rank(),
                     i, buffer[i], pattern(i));
        return 3;
      }
    }
    world.barrier();
    if (world.rank() == 0) std::printf("bcast_bytes ok: %d ranks, %zu bytes\n", world.size(), size);
    return 0;
  } catch (const grove::Error& e) {
    std::fprintf(stderr, "mp_bcast_bytes: %s\n", e.what());
    return 1;
  }
}
