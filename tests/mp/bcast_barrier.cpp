// Multi-process driver: every bcast algorithm x roots x sizes, bytes checked
// exactly, and the barrier's ordering, inside one job launched by `grove run`.
// Prints "bcast_barrier ok: N ranks, C cases" on rank 0 and exits 0, or names
// the first failing case and exits 1.

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "coll/algorithm.hpp"
#include "core/params.hpp"
#include "grove/grove.hpp"

namespace {

std::byte expected(int root, size_t i, int salt) {
  return static_cast<std::byte>(
      (static_cast<size_t>(root) * 131 + i * 7 + static_cast<size_t>(salt)) & 0xff);
}

double monotonic() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::vector<int> roots_for(int size) {
  if (size <= 8) {
    std::vector<int> all(static_cast<size_t>(size));
    for (int r = 0; r < size; ++r)
      all[static_cast<size_t>(r)] = r;
    return all;
  }
  return {0, 1, size / 2, size - 1};
}

// Returns the number of cases run; throws on the first mismatch.
int check_bcast(grove::Comm& comm) {
  std::vector<std::string> algorithms = grove::coll::algorithm_examples("bcast");
  for (const char* extra : {"kary:3", "knomial:3", "pipeline:seg=1KiB", "auto"}) {
    algorithms.push_back(extra);
  }
  const std::vector<size_t> sizes{0, 1, 7, 4096, (1u << 20) + 3};
  int cases = 0;
  for (const std::string& algorithm : algorithms) {
    grove::params::ScopedSet force("bcast_algorithm", algorithm);
    for (int root : roots_for(comm.size())) {
      for (size_t bytes : sizes) {
        const int salt = cases;
        std::vector<std::byte> buffer(bytes, std::byte{0});
        if (comm.rank() == root) {
          for (size_t i = 0; i < bytes; ++i)
            buffer[i] = expected(root, i, salt);
        }
        comm.bcast(std::span(buffer), root);
        for (size_t i = 0; i < bytes; ++i) {
          if (buffer[i] != expected(root, i, salt)) {
            throw std::runtime_error(
                fmt::format("bcast {} root {} {} B: rank {} byte {} is {:#04x}, expected {:#04x}",
                            algorithm, root, bytes, comm.rank(), i, static_cast<int>(buffer[i]),
                            static_cast<int>(expected(root, i, salt))));
          }
        }
        ++cases;
      }
    }
  }
  return cases;
}

// No rank leaves a barrier before every rank entered it. Ranks enter at
// staggered times; enter/leave stamps on the shared monotonic clock are
// compared afterwards (an ordering check, not a timing one).
int check_barrier(grove::Comm& comm) {
  int cases = 0;
  // auto takes the shared-memory barrier on one host: both of its forms.
  const std::pair<std::string, std::string> forms[] = {
      {"dissemination", "auto"}, {"knomial:2", "auto"}, {"knomial:3", "auto"},
      {"flat", "auto"},          {"auto", "flags"},     {"auto", "release"}};
  for (const auto& [algorithm, shm_form] : forms) {
    grove::params::ScopedSet force("barrier_algorithm", algorithm);
    grove::params::ScopedSet form("shm_barrier", shm_form);
    for (int late = 0; late < std::min(comm.size(), 3); ++late) {
      if (comm.rank() == late) usleep(20000);
      std::vector<double> stamps(2);
      stamps[0] = monotonic();
      comm.barrier();
      stamps[1] = monotonic();
      double last_enter = stamps[0], first_leave = stamps[1];
      for (int r = 0; r < comm.size(); ++r) {
        std::vector<double> theirs = stamps;
        comm.bcast(std::span(theirs), r);
        last_enter = std::max(last_enter, theirs[0]);
        first_leave = std::min(first_leave, theirs[1]);
      }
      if (first_leave < last_enter) {
        throw std::runtime_error(
            fmt::format("barrier {} (shm_barrier {}): a rank left at {:.6f} before the last rank "
                        "entered at {:.6f}",
                        algorithm, shm_form, first_leave, last_enter));
      }
      ++cases;
    }
  }
  return cases;
}

}  // namespace

int main() {
  try {
    grove::Session session;
    grove::Comm& world = session.world();
    const int cases = check_bcast(world) + check_barrier(world);
    if (world.rank() == 0)
      std::printf("bcast_barrier ok: %d ranks, %d cases\n", world.size(), cases);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bcast_barrier FAILED: %s\n", e.what());
    return 1;
  }
}
