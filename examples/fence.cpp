// The fence: every rank publishes a "business card" and gets everyone's,
// while ranks may die (docs/fence.md).
//
//   grove run -n 8 --on-failure=notify build/examples/example_fence [VICTIM]
//
// With VICTIM, that rank exits right after the first fence; the survivors'
// second fence still completes and lists it as departed.

#include <cstdlib>
#include <span>
#include <string>

#include <fmt/format.h>

#include "grove/grove.hpp"

int main(int argc, char** argv) {
  grove::Session session;
  grove::Comm& world = session.world();
  const int victim = argc > 1 ? std::atoi(argv[1]) : -1;

  for (int round = 0; round < 2; ++round) {
    const std::string card = fmt::format("rank {} round {}: tcp://node{}:{}", world.rank(), round,
                                         world.rank() / 4, 5000 + world.rank());
    grove::FenceRequest request = world.ifence(std::as_bytes(std::span(card)));
    const auto cards = request.wait();  // every rank's card, indexed by rank
    if (world.rank() == (victim == 0 ? 1 : 0)) {
      for (int r = 0; r < world.size(); ++r) {
        const auto& c = cards[static_cast<size_t>(r)];
        fmt::print("{}\n", c.empty()
                               ? fmt::format("rank {} departed", r)
                               : std::string(reinterpret_cast<const char*>(c.data()), c.size()));
      }
    }
    if (round == 0 && world.rank() == victim) std::_Exit(0);  // leaves without a goodbye
  }
  world.fence({});  // a barrier that tolerates departed ranks
  return 0;
}
