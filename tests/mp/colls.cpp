// Multi-process driver for scatter, gather, allgather(v), alltoall(v),
// reduce, allreduce and reduce-scatter, run inside one job by
// `grove run -n N` (tests/mp/tests.cmake):
//
//   - the correctness matrix: every collective x every algorithm x sizes 0,
//     1, odd and > 1 MiB x every root (4 roots beyond 8 ranks), in-place
//     forms, every (type, op) pair in rotation, bytes checked exactly;
//   - non-blocking collectives in flight together on one communicator and on
//     split/dup ones; persistent operations started 100 times;
//   - ranks that disagree on the algorithm get Errc::mismatch, not a hang;
//   - bad arguments get a grove::Error naming the problem.
//
// Prints "colls ok: N ranks, C cases" on rank 0 and exits 0, or names the
// first failing case and exits 1.

#include <cstdio>
#include <exception>

#include "colls_api.hpp"
#include "colls_matrix.hpp"

int main() {
  try {
    grove::Session session;
    grove::Comm& world = session.world();
    colls::Matrix matrix{world};
    matrix.run_all();
    colls::Api api{world};
    api.run_all();
    world.barrier();
    if (world.rank() == 0) {
      std::printf("colls ok: %d ranks, %d cases\n", world.size(), matrix.cases + api.cases);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "colls FAILED: %s\n", e.what());
    return 1;
  }
}
