// The smallest grove program: rank 0 broadcasts a greeting, everyone checks
// it, and a barrier ends the job. Run: grove run -n 4 build/examples/example_hello_bcast

#include <cstdio>
#include <cstring>
#include <vector>

#include "grove/grove.hpp"

int main() {
  try {
    grove::Session session;  // finds the other ranks; a singleton without grove run
    grove::Comm& world = session.world();

    std::vector<char> message(32, '\0');
    if (world.rank() == 0) std::snprintf(message.data(), message.size(), "hello from rank 0");
    world.bcast(std::span(message), /*root=*/0);

    // The non-blocking form: start, do other work, then wait.
    grove::Request pending = world.ibarrier();
    pending.wait();

    std::printf("rank %d of %d got: %s\n", world.rank(), world.size(), message.data());
    return std::strcmp(message.data(), "hello from rank 0") == 0 ? 0 : 1;
  } catch (const grove::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
