// Multi-process driver for the single-copy (CMA) path of the shared-memory
// collectives (docs/shm.md, "Single copy"), run by `grove run -n N`
// (tests/mp/tests.cmake). Modes:
//
//   (none)    the segment must have the single-copy path. Bcast, scatter,
//             gather, allgather, alltoall, reduce and allreduce (in place
//             too) at blocks just below, at and just above
//             shm_cma_min_bytes and of 1 MiB, every root, and reductions of
//             fewer elements than ranks: exact bytes (reductions in rank
//             order, to the bit) and the shared-memory calls each made
//             (two on the single-copy path, three for reductions, fewer
//             through the slots, none on the schedule path); then 200 calls with no barrier between
//             them, single-copy and slot calls mixed, roots rotating.
//             Prints "shm_cma ok: N ranks, C cases".
//   slots     run with shm_cma_min_bytes=0: the same calls, the large ones
//             through the slots (64 KiB) or the schedule path (1 MiB).
//   mismatch  rank 0 broadcasts 1 MiB, the others 512 KiB: the others get
//             Errc::mismatch naming both calls; then everyone is in step.
//   killed owner|reader
//             (--on-failure=notify, 3 ranks) rank 2 is killed before it
//             publishes as the root of a 1 MiB bcast (ranks 0 and 1 wait
//             for it) or before it reads as a reader (root 0 waits for it
//             to consume): every waiting rank fails with Errc::peer_failed
//             naming rank 2 ("cma_killed ok: rank R named rank 2").
//   denied    every rank but 0 forbids itself process_vm_readv (a seccomp
//             filter) before the session starts: those ranks cannot read
//             the others' memory, so the members agree the single-copy path
//             is off on every member, rank 0 included (grove prints why,
//             once), and 1 MiB calls take the schedule path.

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iterator>
#include <string>
#include <thread>

#include "api/comm_state.hpp"
#include "coll/shm/cma.hpp"
#include "coll/shm/group.hpp"
#include "colls_common.hpp"
#include "core/params.hpp"

namespace {

using colls::expect_bytes;
using colls::pattern_bytes;
using grove::Comm;
using grove::Datatype;
using grove::ReduceOp;

uint64_t shm_calls(Comm& comm) {
  const grove::shm::Group* group = comm.state().shm.get();
  return group == nullptr ? 0 : group->calls();
}

size_t param_bytes(const char* name) {
  return static_cast<size_t>(grove::params::Registry::global().get(name).as_int);
}

struct Driver {
  Comm& comm;
  uint32_t salt = 1;
  int cases = 0;

  int rank() const { return comm.rank(); }
  int size() const { return comm.size(); }
  size_t n() const { return static_cast<size_t>(comm.size()); }
  bool single_copy() const { return comm.state().shm && comm.state().shm->single_copy(); }

  // Shared-memory calls a call of blocks of `block` makes that writes
  // `slot_need` bytes on the slot path (Group::route).
  uint64_t calls_for(grove::coll::Collective collective, size_t slot_need, size_t block) const {
    const size_t cma = grove::shm::cma_min_bytes(collective);
    if (single_copy() && cma > 0 && block >= cma) {
      // Gather: the operands' call, then one per member the root reads.
      return collective == grove::coll::Collective::gather ? static_cast<uint64_t>(n()) : 2;
    }
    if (block > param_bytes("shm_max_bytes")) return 0;
    if (slot_need <= comm.state().shm->slot_bytes()) return 1;
    // Blocks that overflow a slot together take the single copy where CMA works.
    if (!single_copy() || cma == 0) return 0;
    return collective == grove::coll::Collective::gather ? static_cast<uint64_t>(n()) : 2;
  }

  template <class Body>
  void expect_calls(const std::string& what, uint64_t expected, Body&& body) {
    const uint64_t before = shm_calls(comm);
    body();
    const uint64_t made = shm_calls(comm) - before;
    if (made != expected) {
      throw std::runtime_error(fmt::format("{}: rank {} made {} shared-memory calls, expected {}",
                                           what, rank(), made, expected));
    }
    ++cases;
  }

  // Both sides of both thresholds (shm_cma_min_bytes for messages and
  // vectors, shm_cma_min_block_bytes for blocks), and 1 MiB.
  std::vector<size_t> sizes() const {
    std::vector<size_t> out{size_t{1} << 20};
    for (const char* name : {"shm_cma_min_bytes", "shm_cma_min_block_bytes"}) {
      const size_t cma = param_bytes(name);
      const size_t edge = cma > 0 ? cma : 65536;
      out.insert(out.end(), {edge - 1, edge, edge + 1});
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  void bcast(size_t bytes) {
    for (int root = 0; root < size(); ++root) {
      const uint32_t s = salt++;
      std::vector<std::byte> buffer =
          rank() == root ? pattern_bytes(root, bytes, s) : std::vector<std::byte>(bytes);
      const std::string what = fmt::format("bcast root {} {} B", root, bytes);
      expect_calls(what, calls_for(grove::coll::Collective::bcast, bytes, bytes),
                   [&] { comm.bcast(std::span(buffer), root); });
      expect_bytes(what, rank(), buffer, pattern_bytes(root, bytes, s));
    }
  }

  void scatter_gather(size_t block) {
    for (int root = 0; root < size(); ++root) {
      const uint32_t s = salt++;
      std::vector<std::byte> send;
      if (rank() == root) send = pattern_bytes(root, block * n(), s);
      std::vector<std::byte> recv(block, std::byte{0xEE});
      std::string what = fmt::format("scatter root {} {} B", root, block);
      expect_calls(what, calls_for(grove::coll::Collective::scatter, block * n(), block),
                   [&] { comm.scatter(send, recv, root); });
      expect_bytes(what, rank(), recv,
                   pattern_bytes(root, block, s, block * static_cast<size_t>(rank())));

      const std::vector<std::byte> mine = pattern_bytes(rank(), block, s);
      std::vector<std::byte> all(rank() == root ? block * n() : 0, std::byte{0xEE});
      what = fmt::format("gather root {} {} B", root, block);
      expect_calls(what, calls_for(grove::coll::Collective::gather, block, block),
                   [&] { comm.gather(mine, all, root); });
      if (rank() == root) {
        for (int r = 0; r < size(); ++r) {
          expect_bytes(what, rank(), all.data() + static_cast<size_t>(r) * block,
                       pattern_bytes(r, block, s).data(), block);
        }
      }
    }
  }

  void allgather_alltoall(size_t block) {
    for (bool in_place : {false, true}) {
      const uint32_t s = salt++;
      const std::vector<std::byte> mine = pattern_bytes(rank(), block, s);
      std::vector<std::byte> all(block * n(), std::byte{0xEE});
      std::string what = fmt::format("allgather {} B{}", block, in_place ? " in place" : "");
      expect_calls(what, calls_for(grove::coll::Collective::allgather, block, block), [&] {
        if (in_place) {
          std::copy(mine.begin(), mine.end(), all.begin() + static_cast<long>(block) * rank());
          comm.allgather(std::span(all));
        } else {
          comm.allgather(mine, all);
        }
      });
      for (int r = 0; r < size(); ++r) {
        expect_bytes(what, rank(), all.data() + static_cast<size_t>(r) * block,
                     pattern_bytes(r, block, s).data(), block);
      }

      // Block j of rank i: pattern of rank i at offset j * block.
      std::vector<std::byte> send = pattern_bytes(rank(), block * n(), s);
      std::vector<std::byte> recv(block * n(), std::byte{0xEE});
      what = fmt::format("alltoall {} B{}", block, in_place ? " in place" : "");
      expect_calls(what, calls_for(grove::coll::Collective::alltoall, block * n(), block), [&] {
        if (in_place) {
          recv = send;
          comm.alltoall(std::span(recv));
        } else {
          comm.alltoall(send, recv);
        }
      });
      for (int r = 0; r < size(); ++r) {
        expect_bytes(what, rank(), recv.data() + static_cast<size_t>(r) * block,
                     pattern_bytes(r, block, s, block * static_cast<size_t>(rank())).data(), block);
      }
    }
  }

  // Shared-memory calls of a reduction of `bytes`: three on the
  // single-copy path, two or one through the slots (the two-phase split at
  // shm_split_reduction_bytes, 4 KiB), none on the schedule path.
  uint64_t reduction_calls(size_t bytes) const {
    const uint64_t calls = calls_for(grove::coll::Collective::reduce, bytes, bytes);
    if (calls == 2) return 3;
    return calls == 1 && bytes >= 4096 ? 2 : calls;
  }

  // Reduce (every root) and allreduce (in place too), the results to the
  // bit against the rank-order reference, floats included.
  void reductions(size_t bytes) {
    const auto [type, op] = bytes % 8 == 0   ? std::pair{Datatype::float64, ReduceOp::sum}
                            : bytes % 4 == 0 ? std::pair{Datatype::float32, ReduceOp::prod}
                                             : std::pair{Datatype::uint8, ReduceOp::bxor};
    const size_t count = bytes / grove::datatype_size(type);
    colls::with_type(type, [&]<class T>() {
      const uint32_t s = salt++;
      const std::vector<std::byte> mine = colls::operand_bytes<T>(rank(), count, op, s);
      const std::vector<std::byte> want = colls::reduced_bytes<T>(size(), count, op, s);
      for (int root = 0; root < size(); ++root) {
        std::vector<std::byte> recv(rank() == root ? bytes : 0, std::byte{0xEE});
        const std::string what =
            fmt::format("reduce root {} {} x {}", root, count, grove::datatype_name(type));
        expect_calls(what, reduction_calls(bytes),
                     [&] { comm.reduce(mine, recv, type, op, root); });
        if (rank() == root) expect_bytes(what, rank(), recv, want);
      }
      for (bool in_place : {false, true}) {
        std::vector<std::byte> recv(bytes, std::byte{0xEE});
        const std::string what = fmt::format(
            "allreduce {} x {}{}", count, grove::datatype_name(type), in_place ? " in place" : "");
        expect_calls(what, reduction_calls(bytes), [&] {
          if (in_place) {
            recv = mine;
            comm.allreduce(std::span(recv), type, op);
          } else {
            comm.allreduce(mine, recv, type, op);
          }
        });
        expect_bytes(what, rank(), recv, want);
      }
    });
  }

  // No barrier between calls: an owner's buffer is reused by the next call
  // as soon as the owner returns, and slot calls run between single-copy
  // ones (their numbers interleave).
  void back_to_back() {
    const size_t large = 96 * 1024;
    std::vector<std::byte> big(large);
    std::vector<std::byte> small(200);
    for (int i = 0; i < 200; ++i) {
      const int root = i % size();
      const uint32_t s = salt++;
      std::vector<std::byte>& buffer = i % 3 == 2 ? small : big;
      if (rank() == root) buffer = pattern_bytes(root, buffer.size(), s);
      comm.bcast(std::span(buffer), root);
      expect_bytes(fmt::format("back-to-back bcast {}", i), rank(), buffer,
                   pattern_bytes(root, buffer.size(), s));
      const std::vector<std::byte> mine = pattern_bytes(rank(), large / 4, s + 7);
      std::vector<std::byte> all(large / 4 * n());
      comm.allgather(mine, all);
      for (int r = 0; r < size(); ++r) {
        expect_bytes(fmt::format("back-to-back allgather {}", i), rank(),
                     all.data() + static_cast<size_t>(r) * (large / 4),
                     pattern_bytes(r, large / 4, s + 7).data(), large / 4);
      }
    }
    ++cases;
  }

  void run_all() {
    for (size_t bytes : sizes()) {
      bcast(bytes);
      scatter_gather(bytes);
      allgather_alltoall(bytes);
      reductions(bytes);
    }
    // Fewer elements than members: some members' chunks are empty.
    {
      grove::params::ScopedSet low("shm_cma_min_bytes", "8");
      grove::params::ScopedSet low_block("shm_cma_min_block_bytes", "8");
      reductions(16);
    }
    back_to_back();
  }
};

void report(const char* mode, const grove::Error& e) {
  std::printf("rank shm_cma %s: %s: %s\n", mode, std::string(grove::errc_name(e.code())).c_str(),
              e.what());
  std::fflush(stdout);
}

int mismatch(Comm& world) {
  const size_t bytes = world.rank() == 0 ? size_t{1} << 20 : size_t{512} << 10;
  std::vector<std::byte> buffer(bytes);
  if (world.rank() == 0) {
    world.bcast(std::span(buffer), 0);
  } else {
    try {
      world.bcast(std::span(buffer), 0);
      throw std::runtime_error("mismatch: no error");
    } catch (const grove::Error& e) {
      report("mismatch", e);
      if (e.code() != grove::Errc::mismatch) throw;
    }
  }
  world.barrier();
  if (world.rank() == 0) std::printf("shm_cma mismatch ok\n");
  return 0;
}

// Rank 2 is killed 200 ms into a 1 MiB bcast: as its root ("owner": it
// never publishes; ranks 0 and 1 wait for it) or as a reader ("reader":
// root 0 waits for it to consume; rank 1 reads and returns). Every rank
// that waits must fail with Errc::peer_failed naming rank 2, on the
// single-copy path (tests/mp/named_in_time.sh bounds how soon).
int killed(Comm& world, const std::string& who) {
  const int rank = world.rank();
  const int root = who == "owner" ? 2 : 0;
  std::vector<std::byte> buffer(size_t{1} << 20);
  world.barrier();
  if (rank == 2) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ::raise(SIGKILL);
  }
  const bool waits = who == "owner" || rank == root;
  const uint64_t before = shm_calls(world);
  bool ok = false;
  std::byte done{1};
  try {
    world.bcast(std::span(buffer), root);
    if (waits) std::printf("cma_killed FAILED: rank %d: no error\n", rank);
    ok = !waits;
    // Rank 1, a reader that finished: stays until root 0 has named rank 2
    // (the failure notice names the lowest departed rank).
    if (!waits) world.recv(std::span(&done, 1), 0, 5);
  } catch (const grove::Error& e) {
    report("killed", e);
    const std::string text = e.what();
    ok = waits && e.code() == grove::Errc::peer_failed &&
         text.find("rank 2 departed") != std::string::npos;
    if (ok) {
      std::printf("cma_killed ok: rank %d named rank 2\n", rank);
    } else {
      std::printf("cma_killed FAILED: rank %d: the error does not name rank 2\n", rank);
    }
    if (who == "reader") world.send(std::span(&done, 1), 1, 5);
  }
  if (shm_calls(world) - before != 2) {
    std::printf("cma_killed FAILED: rank %d: the call did not take the single-copy path\n", rank);
    ok = false;
  }
  std::fflush(stdout);
  std::_Exit(ok ? 0 : 1);  // the finalize barrier would wait for rank 2
}

// Before the session, on every rank but 0: a seccomp filter makes
// process_vm_readv fail with EPERM (what container runtimes' default
// profiles do), so these ranks cannot read any other member's memory.
void deny_reading() {
  const char* env = std::getenv("GROVE_JOB_RANK");
  if (env == nullptr) throw std::runtime_error("denied: run under grove run");
  if (std::string(env) == "0") return;
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_readv, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog program{static_cast<unsigned short>(std::size(filter)), filter};
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program, 0, 0) != 0) {
    throw std::runtime_error(fmt::format("denied: seccomp: {}", std::strerror(errno)));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  try {
    grove::params::ScopedSet max("shm_max_bytes", "256KiB");
    grove::params::ScopedSet slot("shm_slot_bytes", "256KiB");
    if (mode == "denied") deny_reading();
    grove::Session session;
    Comm& world = session.world();
    if (world.state().shm == nullptr) throw std::runtime_error("no shared-memory segment");
    if (mode == "mismatch") return mismatch(world);
    if (mode == "killed") return killed(world, argc > 2 ? argv[2] : "");
    Driver driver{world};
    const bool want = mode != "denied";
    if (driver.single_copy() != want) {
      throw std::runtime_error(fmt::format("rank {}: the single-copy path is {} (expected {})",
                                           world.rank(), driver.single_copy() ? "on" : "off",
                                           want ? "on" : "off"));
    }
    driver.run_all();
    world.barrier();
    if (world.rank() == 0)
      std::printf("shm_cma ok: %d ranks, %d cases\n", world.size(), driver.cases);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "shm_cma FAILED: %s\n", e.what());
    return 1;
  }
}
