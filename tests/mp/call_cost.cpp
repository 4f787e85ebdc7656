// The per-call cost contract of collectives (src/coll/call.hpp): after
// warm-up, a repeated call of one shape allocates nothing, in every form
// (blocking, non-blocking, persistent); and a parameter change between calls
// takes effect at the next call (the cached plan is resolved again).
//
// Allocations are counted by replacing the global operator new of this
// program (the library's allocations go through it too). Prints
// "call_cost ok: N ranks" on rank 0 when every rank passed.

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <new>
#include <string>
#include <vector>

#include "api/comm_state.hpp"
#include "core/params.hpp"
#include "grove/grove.hpp"

namespace {

std::atomic<bool> counting{false};
std::atomic<long> allocations{0};

void* allocate(std::size_t size) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}

int failures = 0;

void check(bool ok, const std::string& what) {
  if (ok) return;
  std::printf("check failed: %s\n", what.c_str());
  ++failures;
}

// Calls `call` `warmup` times, then counts the allocations of `calls` more.
long allocations_of(const std::function<void()>& call, int warmup = 20, int calls = 200) {
  for (int i = 0; i < warmup; ++i)
    call();
  allocations.store(0);
  counting.store(true);
  for (int i = 0; i < calls; ++i)
    call();
  counting.store(false);
  return allocations.load();
}

// The algorithm text of the most recently used plan of `comm`.
std::string last_algorithm(grove::Comm& comm) {
  grove::detail::CallShape shape{
      .collective = grove::detail::Collective::bcast, .root = 0, .count = 64};
  const auto* plan = comm.state().cache.find(shape);
  return plan != nullptr ? (*plan)->algorithm : std::string("(none)");
}

}  // namespace

void* operator new(std::size_t size) {
  return allocate(size);
}
void* operator new[](std::size_t size) {
  return allocate(size);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}

int main() {
  try {
    grove::Session session;
    grove::Comm& world = session.world();
    const int rank = world.rank();
    const auto n = static_cast<size_t>(world.size());
    std::vector<std::byte> one(64), all(64 * n), send(64 * n, std::byte{1});
    std::vector<int> sums(16, rank);
    const std::vector<size_t> counts(n, 64);
    const grove::Comm::AlltoallvLayout layout{counts, {}, counts, {}};

    struct Case {
      const char* name;
      std::function<void()> call;
    };
    grove::Persistent persistent = world.bcast_init(std::span(one), 0);
    const std::vector<Case> cases = {
        {"bcast", [&] { world.bcast(std::span(one), 0); }},
        {"barrier", [&] { world.barrier(); }},
        {"ibcast+wait", [&] { world.ibcast(std::span(one), 0).wait(); }},
        {"ibarrier+test",
         [&] {
           grove::Request r = world.ibarrier();
           while (!r.test()) {
           }
         }},
        {"persistent bcast",
         [&] {
           persistent.start();
           persistent.wait();
         }},
        {"allreduce", [&] { world.allreduce(std::span(sums), grove::ReduceOp::sum); }},
        {"gather", [&] { world.gather(std::span(send).first(64), std::span(all), 0); }},
        {"allgather", [&] { world.allgather(std::span(send).first(64), std::span(all)); }},
        {"alltoall", [&] { world.alltoall(std::span(send), std::span(all)); }},
        {"allgatherv",
         [&] { world.allgatherv(std::span(send).first(64), std::span(all), counts); }},
        {"alltoallv", [&] { world.alltoallv(std::span(send), std::span(all), layout); }},
        {"bcast, barrier alternating",
         [&] {
           world.bcast(std::span(one), 0);
           world.barrier();
         }},
    };
    // The counter sees the library's allocations (setting a parameter copies
    // its entry inside libgrove), so a zero below means something.
    check(allocations_of([] { grove::params::ScopedSet s("timeout_ms", "1234"); }, 0, 1) > 0,
          "rank " + std::to_string(rank) + ": allocations inside the library are not counted");
    for (const Case& c : cases) {
      const long count = allocations_of(c.call);
      check(count == 0, "rank " + std::to_string(rank) + ": " + c.name + ": " +
                            std::to_string(count) +
                            " allocations in 200 calls after warm-up (expected none)");
    }

    // A parameter set between calls is seen by the next call (the schedule
    // path: the blocking form of a small bcast runs on shared memory).
    world.ibcast(std::span(one), 0).wait();
    const std::string before = last_algorithm(world);
    {
      grove::params::ScopedSet force("bcast_algorithm", "flat");
      world.ibcast(std::span(one), 0).wait();
      check(last_algorithm(world) == "flat", "rank " + std::to_string(rank) +
                                                 ": after bcast_algorithm=flat the plan runs " +
                                                 last_algorithm(world));
    }
    world.ibcast(std::span(one), 0).wait();
    check(last_algorithm(world) == before, "rank " + std::to_string(rank) +
                                               ": after restoring bcast_algorithm the plan runs " +
                                               last_algorithm(world) + ", not " + before);

    // Every rank reports: rank 0 prints ok only if all passed.
    std::vector<int> failed(1, failures);
    world.allreduce(std::span(failed), grove::ReduceOp::sum);
    if (rank == 0 && failed[0] == 0) std::printf("call_cost ok: %zu ranks\n", n);
    return failed[0] == 0 ? 0 : 1;
  } catch (const grove::Error& e) {
    std::printf("check failed: %s\n", e.what());
    return 1;
  }
}
