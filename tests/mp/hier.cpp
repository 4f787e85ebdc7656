// Multi-process driver for the hierarchical algorithm (src/api/hierarchy.hpp),
// run by `grove run -n N --hosts K` (tests/mp/tests.cmake): the ranks are
// told they run on K hosts (rank r on host r*K/N).
//
//   - the world has a hierarchy exactly when some host has two ranks and
//     there are several hosts, with the node and leader communicators that
//     placement implies;
//   - blocking barrier, bcast, reduce, allreduce and allgather with `auto`
//     take it (the hierarchy counts its calls) and give exact bytes: every root, in-place forms,
//     sizes 1 B to past the shared-memory limit, every (type, op) pair in rotation;
//   - their non-blocking forms take schedules, with the
//     same results; `bcast_algorithm=hier` is refused for them by name;
//   - a split communicator spanning hosts gets its own hierarchy.
//
// Prints "hier ok: N ranks, K hosts, C cases" on rank 0.

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "api/comm_state.hpp"
#include "api/hierarchy.hpp"
#include "colls_common.hpp"
#include "core/params.hpp"

namespace {

using colls::expect_bytes;
using colls::operand_bytes;
using colls::pattern_bytes;
using colls::reduced_bytes;
using grove::Comm;
using grove::Datatype;
using grove::ReduceOp;

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(what);
}

// Calls this rank ran by the hierarchical algorithm.
uint64_t host_calls(Comm& comm) {
  const auto& h = comm.state().hierarchy;
  return h ? h->calls : 0;
}

struct Driver {
  Comm& comm;
  int hosts;
  uint32_t salt = 1;
  int cases = 0;
  size_t pair = 0;

  int rank() const { return comm.rank(); }
  int size() const { return comm.size(); }

  // `blocking`: the call must have gone through the host segments; else it
  // must not have.
  template <class F>
  void run(const std::string& what, bool blocking, F&& body) {
    const uint64_t before = host_calls(comm);
    body();
    const uint64_t made = host_calls(comm) - before;
    if (blocking && made != 1) fail(what + ": did not run hierarchically");
    if (!blocking && made != 0) fail(what + ": a non-blocking call ran hierarchically");
    ++cases;
    ++salt;
  }

  void bcasts(bool blocking) {
    for (size_t bytes : {size_t{1}, size_t{7}, size_t{4096}, size_t{300} * 1024}) {
      for (int root = 0; root < size(); ++root) {
        const std::string what = fmt::format("bcast {} B root {}", bytes, root);
        std::vector<std::byte> buffer =
            rank() == root ? pattern_bytes(root, bytes, salt) : std::vector<std::byte>(bytes);
        const std::vector<std::byte> want = pattern_bytes(root, bytes, salt);
        run(what, blocking, [&] {
          if (blocking)
            comm.bcast(std::span(buffer), root);
          else
            comm.ibcast(std::span(buffer), root).wait();
        });
        expect_bytes(what, rank(), buffer, want);
      }
    }
  }

  void reductions(bool blocking) {
    const auto pairs = colls::type_op_pairs();
    for (size_t count : {size_t{1}, size_t{3}, size_t{1000}, size_t{70000}}) {
      for (int root = 0; root < size(); ++root) {
        const auto [type, op] = pairs[pair++ % pairs.size()];
        colls::with_type(type, [&]<class T>() {
          const std::string what =
              fmt::format("reduce {} x {} {} root {}", count, grove::datatype_name(type),
                          grove::reduce_op_name(op), root);
          const std::vector<std::byte> send = operand_bytes<T>(rank(), count, op, salt);
          std::vector<std::byte> recv(rank() == root ? send.size() : 0);
          const std::vector<std::byte> want = reduced_bytes<T>(size(), count, op, salt);
          run(what, blocking, [&] {
            if (blocking)
              comm.reduce(std::span(send), std::span(recv), type, op, root);
            else
              comm.ireduce(std::span(send), std::span(recv), type, op, root).wait();
          });
          if (rank() == root) expect_bytes(what, rank(), recv, want);
          return 0;
        });
      }
      for (bool in_place : {false, true}) {
        const auto [type, op] = pairs[pair++ % pairs.size()];
        colls::with_type(type, [&]<class T>() {
          const std::string what =
              fmt::format("allreduce {} x {} {}{}", count, grove::datatype_name(type),
                          grove::reduce_op_name(op), in_place ? " in place" : "");
          const std::vector<std::byte> send = operand_bytes<T>(rank(), count, op, salt);
          std::vector<std::byte> recv = in_place ? send : std::vector<std::byte>(send.size());
          const std::vector<std::byte> want = reduced_bytes<T>(size(), count, op, salt);
          run(what, blocking, [&] {
            if (in_place && blocking)
              comm.allreduce(std::span(recv), type, op);
            else if (in_place)
              comm.iallreduce(std::span(recv), type, op).wait();
            else if (blocking)
              comm.allreduce(std::span(send), std::span(recv), type, op);
            else
              comm.iallreduce(std::span(send), std::span(recv), type, op).wait();
          });
          expect_bytes(what, rank(), recv, want);
          return 0;
        });
      }
    }
  }

  void allgathers(bool blocking) {
    const size_t n = static_cast<size_t>(size());
    for (size_t block : {size_t{1}, size_t{5}, size_t{4096}, size_t{100} * 1024}) {
      for (bool in_place : {false, true}) {
        const std::string what =
            fmt::format("allgather {} B per rank{}", block, in_place ? " in place" : "");
        std::vector<std::byte> want(n * block);
        for (int r = 0; r < size(); ++r) {
          const auto part = pattern_bytes(r, block, salt);
          std::copy(part.begin(), part.end(), want.begin() + static_cast<ptrdiff_t>(r * block));
        }
        const std::vector<std::byte> send = pattern_bytes(rank(), block, salt);
        std::vector<std::byte> recv(n * block);
        if (in_place)
          std::copy(send.begin(), send.end(),
                    recv.begin() + static_cast<ptrdiff_t>(rank() * block));
        run(what, blocking, [&] {
          if (in_place && blocking)
            comm.allgather(std::span(recv));
          else if (in_place)
            comm.iallgather(std::span(recv)).wait();
          else if (blocking)
            comm.allgather(std::span(send), std::span(recv));
          else
            comm.iallgather(std::span(send), std::span(recv)).wait();
        });
        expect_bytes(what, rank(), recv, want);
      }
    }
  }

  void barriers(bool blocking) {
    for (int i = 0; i < 20; ++i) {
      run("barrier", blocking, [&] {
        if (blocking)
          comm.barrier();
        else
          comm.ibarrier().wait();
      });
    }
  }

  void all(bool blocking) {
    barriers(blocking);
    bcasts(blocking);
    reductions(blocking);
    allgathers(blocking);
  }
};

// The hierarchy `comm` must have, given its ranks' hosts (of `hosts`).
void check_shape(Comm& comm, int hosts) {
  const auto& state = comm.state();
  const int n = comm.size();
  int used = 0, most = 0;
  std::vector<int> count(static_cast<size_t>(hosts), 0);
  for (int r = 0; r < n; ++r)
    ++count[static_cast<size_t>(state.host_of[static_cast<size_t>(r)])];
  for (int c : count) {
    used += c > 0;
    most = std::max(most, c);
  }
  if (state.hosts != used || state.max_ranks_per_host != most)
    fail(fmt::format("placement: {} hosts, at most {} per host; expected {} and {}", state.hosts,
                     state.max_ranks_per_host, used, most));
  const bool want = used > 1 && most > 1;
  if (static_cast<bool>(state.hierarchy) != want)
    fail(fmt::format("hierarchy {} on {} hosts with at most {} ranks per host",
                     state.hierarchy ? "present" : "absent", used, most));
  if (!want) return;
  const auto& h = *state.hierarchy;
  const int mine = state.host_of[static_cast<size_t>(comm.rank())];
  if (h.node.size() != count[static_cast<size_t>(mine)])
    fail(fmt::format("node communicator of {} ranks; its host has {}", h.node.size(),
                     count[static_cast<size_t>(mine)]));
  const bool leader = h.node.rank() == 0;
  if (h.leaders.has_value() != leader) fail("a leaders communicator on a rank that is no leader");
  if (leader && h.leaders->size() != used)
    fail(fmt::format("leaders communicator of {} ranks for {} hosts", h.leaders->size(), used));
}

}  // namespace

int main() {
  try {
    grove::Session session;
    Comm& world = session.world();
    const char* env = std::getenv("GROVE_JOB_HOSTS");
    const int hosts = env != nullptr ? std::atoi(env) : 1;
    if (world.state().hosts != hosts)
      fail(fmt::format("the world spans {} hosts; grove run --hosts said {}", world.state().hosts,
                       hosts));
    check_shape(world, hosts);
    Driver d{world, hosts};
    if (world.state().hierarchy) {
      d.all(true);
      d.all(false);
      // Forced on a non-blocking call: refused by name.
      {
        grove::params::ScopedSet forced("bcast_algorithm", "hier");
        std::vector<std::byte> b(8);
        try {
          world.ibcast(std::span(b), 0).wait();
          fail("ibcast with bcast_algorithm=hier was accepted");
        } catch (const grove::Error& e) {
          if (std::string(e.what()).find("hier serves blocking calls only") == std::string::npos)
            fail(std::string("wrong refusal: ") + e.what());
        }
        world.bcast(std::span(b), 0);  // forced and blocking: runs
      }
    }
    // Every other rank: a communicator over hosts as the world spans them.
    Comm half = world.split(world.rank() % 2, world.rank());
    check_shape(half, hosts);
    if (half.state().hierarchy) {
      Driver h{half, hosts};
      h.bcasts(true);
      d.cases += h.cases;
    }
    world.barrier();
    if (world.rank() == 0)
      std::printf("hier ok: %d ranks, %d hosts, %d cases\n", world.size(), hosts, d.cases);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hier FAILED: %s\n", e.what());
    return 1;
  }
}
