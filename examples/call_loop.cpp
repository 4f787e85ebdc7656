// Repeats one small blocking collective, for measuring grove's software cost
// per call. Deterministic instruction counts come from callgrind on one rank,
// counting only the measured loop (function measured_calls, after warm-up):
// scripts/call_cost.sh runs that (results: docs/call-cost.md). Without
// valgrind it prints the mean time per call (a noisy figure; `grove bench`
// gives medians with confidence intervals).
//
// Usage: example_call_loop COLLECTIVE BYTES CALLS [WARMUP]
//   COLLECTIVE: bcast, barrier, allreduce and reduce (BYTES of uint8 sums,
//   to root 0), gather, scatter (root 0), allgather, alltoall (BYTES per rank
//   or block).

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "grove/grove.hpp"

namespace {

// Not inlined, so callgrind's --toggle-collect can name it.
[[gnu::noinline]] void measured_calls(const std::function<void()>& call, long calls) {
  for (long i = 0; i < calls; ++i)
    call();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s COLLECTIVE BYTES CALLS [WARMUP]\n", argv[0]);
    return 2;
  }
  const std::string collective = argv[1];
  const size_t bytes = std::strtoul(argv[2], nullptr, 10);
  const long calls = std::strtol(argv[3], nullptr, 10);
  const long warmup = argc > 4 ? std::strtol(argv[4], nullptr, 10) : 100;
  try {
    grove::Session session;
    grove::Comm& world = session.world();
    const auto size = static_cast<size_t>(world.size());
    std::vector<std::byte> send(bytes * size, std::byte{1});
    std::vector<std::byte> recv(bytes * size);
    std::span<std::byte> one(recv.data(), bytes);
    std::span<const std::byte> mine(send.data(), bytes);
    std::function<void()> call;
    if (collective == "bcast") {
      call = [&] { world.bcast(one, 0); };
    } else if (collective == "barrier") {
      call = [&] { world.barrier(); };
    } else if (collective == "allreduce") {
      call = [&] { world.allreduce(mine, one, grove::Datatype::uint8, grove::ReduceOp::sum); };
    } else if (collective == "reduce") {
      call = [&] { world.reduce(mine, one, grove::Datatype::uint8, grove::ReduceOp::sum, 0); };
    } else if (collective == "gather") {
      call = [&] { world.gather(mine, recv, 0); };
    } else if (collective == "scatter") {
      call = [&] { world.scatter(send, one, 0); };
    } else if (collective == "allgather") {
      call = [&] { world.allgather(mine, recv); };
    } else if (collective == "alltoall") {
      call = [&] { world.alltoall(send, recv); };
    } else {
      std::fprintf(stderr, "unknown collective '%s'\n", collective.c_str());
      return 2;
    }
    for (long i = 0; i < warmup; ++i)
      call();
    const auto start = std::chrono::steady_clock::now();
    measured_calls(call, calls);
    const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - start;
    world.barrier();
    if (world.rank() == 0) {
      std::printf("%s %zu B x %ld calls on %d ranks: %.3f us per call\n", collective.c_str(), bytes,
                  calls, world.size(), took.count() / static_cast<double>(calls));
    }
    return 0;
  } catch (const grove::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
