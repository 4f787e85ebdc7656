// Ranks that disagree on the algorithm get a named grove::Error, not a hang:
// rank 0 forces one bcast algorithm, the others another. Every rank prints
// the error it got; the test checks that at least one names the mismatch,
// and that the communicator still works afterwards.

#include <cstdio>
#include <vector>

#include "core/params.hpp"
#include "grove/grove.hpp"

int main() {
  grove::Session session;
  grove::Comm& world = session.world();
  grove::params::ScopedSet force("bcast_algorithm", world.rank() == 0 ? "flat" : "chain");
  grove::params::ScopedSet bound("timeout_ms", "20000");
  std::vector<std::byte> buffer(64);
  try {
    world.bcast(std::span(buffer), 0);
    std::printf("rank %d: no error\n", world.rank());
  } catch (const grove::Error& e) {
    std::printf("rank %d: %s: %s\n", world.rank(), std::string(grove::errc_name(e.code())).c_str(),
                e.what());
  }
  std::fflush(stdout);
  // Both sides consumed the call's sequence number, so the ranks are in step
  // again: this barrier keeps rank 0 (which saw no error) alive until the
  // others have found the mismatch.
  world.barrier();
  return 0;
}
