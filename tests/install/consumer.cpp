// A program of another project using grove's public API only: every rank
// contributes rank + 1, an allreduce sums them, rank 0 broadcasts a word,
// and each rank prints what it got, so the test can check exact output.

#include <cstdio>
#include <cstring>
#include <vector>

#include "grove/grove.hpp"

int main() {
  try {
    grove::Session session;
    grove::Comm& world = session.world();
    std::vector<int> value{world.rank() + 1};
    world.allreduce(std::span(value), grove::ReduceOp::sum);
    std::vector<char> word(8, '\0');
    if (world.rank() == 0) std::strcpy(word.data(), "grove");
    world.bcast(std::span(word), 0);
    world.barrier();
    std::printf("consumer rank %d of %d: sum %d, word %s\n", world.rank(), world.size(), value[0],
                word.data());
    return 0;
  } catch (const grove::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
