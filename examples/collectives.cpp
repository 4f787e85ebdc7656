// A tour of grove's collectives. Run it on 4 local ranks with
//
//   grove run -n 4 build/examples/example_collectives
//
// Every collective comes blocking (allreduce), non-blocking (iallreduce,
// returning a Request) and persistent (allreduce_init, started many times).
// Algorithms are chosen automatically; force one with a parameter, e.g.
// `grove run -n 4 --param allreduce_algorithm=ring ...`.

#include <cstdio>
#include <numeric>
#include <vector>

#include "grove/grove.hpp"

int main() {
  try {
    grove::Session session;
    grove::Comm& world = session.world();
    const int rank = world.rank();
    const int size = world.size();

    // Allreduce: the sum of every rank's vector, on every rank.
    std::vector<double> mine(4, rank + 1.0), sum(4);
    world.allreduce<double>(mine, sum, grove::ReduceOp::sum);

    // Allgather: one int from each rank, in rank order.
    std::vector<int> ranks(static_cast<size_t>(size));
    const std::vector<int> me{rank * 10};
    world.allgather<int>(me, ranks);

    // Alltoall in place: element j goes to rank j.
    std::vector<int> mail(static_cast<size_t>(size));
    for (int j = 0; j < size; ++j)
      mail[static_cast<size_t>(j)] = rank * 100 + j;
    world.alltoall(std::as_writable_bytes(std::span(mail)));

    // Non-blocking: start a reduce-scatter, do other work, then wait.
    std::vector<int64_t> blocks(static_cast<size_t>(size), rank), mine_reduced(1);
    grove::Request pending = world.ireduce_scatter(std::as_bytes(std::span(blocks)),
                                                   std::as_writable_bytes(std::span(mine_reduced)),
                                                   grove::Datatype::int64, grove::ReduceOp::sum);
    pending.wait();

    // Persistent: bind once, start many times.
    std::vector<uint32_t> counter{1}, total(1);
    grove::Persistent step = world.allreduce_init(std::as_bytes(std::span(counter)),
                                                  std::as_writable_bytes(std::span(total)),
                                                  grove::Datatype::uint32, grove::ReduceOp::sum);
    for (int i = 0; i < 10; ++i) {
      step.start();
      step.wait();
      counter[0] = total[0];
    }

    // Split: even and odd ranks, each with its own communicator.
    grove::Comm half = world.split(rank % 2, rank);
    std::vector<int> half_sum(1);
    const std::vector<int> one{1};
    half.allreduce<int>(one, half_sum, grove::ReduceOp::sum);

    if (rank == 0) {
      std::printf("allreduce: %.0f (expected %d)\n", sum[0], size * (size + 1) / 2);
      std::printf("allgather: ");
      for (int v : ranks)
        std::printf("%d ", v);
      std::printf("\nalltoall: rank 0 got ");
      for (int v : mail)
        std::printf("%d ", v);
      std::printf("\nreduce_scatter: %lld (expected %d)\n", static_cast<long long>(mine_reduced[0]),
                  size * (size - 1) / 2);
      std::printf("persistent: %u after 10 rounds\n", counter[0]);
      std::printf("split: %d ranks in rank 0's half\n", half_sum[0]);
    }
    return 0;
  } catch (const grove::Error& e) {
    std::fprintf(stderr, "collectives example: %s\n", e.what());
    return 1;
  }
}
