// Multi-process driver for the shared-memory collectives (src/coll/shm/),
// run by `grove run -n N` (tests/mp/tests.cmake). Modes:
//
//   (none)    every blocking collective with `auto` at sizes on both sides of
//             every limit (one byte, odd, the two-phase reduction, exactly
//             shm_max_bytes, one block past the slot), every root, in-place
//             forms: exact bytes, and the number of shared-memory calls each
//             made (so a call that silently took the schedule path fails);
//             then 300 back-to-back calls with no barrier between them (slot
//             reuse), non-blocking schedule-path calls in flight across
//             blocking shared-memory ones, and split/dup communicators.
//             Prints "shm ok: N ranks, C cases".
//   off       run with shm_collectives=false: no segment, results still exact.
//   mismatch  rank 0 calls bcast while the others call allreduce: the others
//             get Errc::mismatch naming both calls; then everyone is in step.
//             Then the same through the inline lines (16 B on both sides),
//             and a 16 B bcast against the root's 1 KiB one.
//   timeout   rank 0 enters bcast late (after timeout_ms): the others get
//             Errc::timeout naming rank 0; then everyone is in step.
//   departed  rank 1 exits; the others wait for it in a barrier and get
//             Errc::peer_failed naming it (run with --on-failure=notify).

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <thread>

#include "api/comm_state.hpp"
#include "coll/shm/cma.hpp"
#include "coll/shm/group.hpp"
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

uint64_t shm_calls(Comm& comm) {
  const grove::shm::Group* group = comm.state().shm.get();
  return group == nullptr ? 0 : group->calls();
}

struct Driver {
  Comm& comm;
  bool shm_expected = true;
  uint32_t salt = 1;
  int cases = 0;

  int rank() const { return comm.rank(); }
  int size() const { return comm.size(); }
  size_t n() const { return static_cast<size_t>(comm.size()); }
  size_t max_bytes() const { return 256 * 1024; }  // shm_max_bytes set by main
  size_t slot() const { return 256 * 1024; }       // shm_slot_bytes set by main
  // The single-copy path's threshold when the segment has the path, else 0.
  size_t cma_from(grove::coll::Collective collective) const {
    const grove::shm::Group* group = comm.state().shm.get();
    if (group == nullptr || !group->single_copy()) return 0;
    return grove::shm::cma_min_bytes(collective);
  }

  // Runs `body` and checks it made `expected` shared-memory calls (0: took
  // the schedule path).
  template <class Body>
  void expect_calls(const std::string& what, uint64_t expected, Body&& body) {
    const uint64_t before = shm_calls(comm);
    body();
    const uint64_t after = shm_calls(comm);
    if (!shm_expected) expected = 0;
    const uint64_t made = after - before;
    if (made != expected) {
      throw std::runtime_error(fmt::format("{}: rank {} made {} shared-memory calls, expected {}",
                                           what, rank(), made, expected));
    }
    ++cases;
  }

  // Both sides of the inline lines' limit too (a bcast's or allgather's
  // block; scatter's and alltoall's N blocks).
  std::vector<size_t> sizes() const {
    return {1,         7,           grove::shm::kInlineBytes, grove::shm::kInlineBytes + 1,
            4096 + 12, max_bytes(), max_bytes() + 1};
  }
  bool fits(size_t slot_need, size_t block) const {
    return block <= max_bytes() && slot_need <= slot();
  }
  // Shared-memory calls of a collective with a single-copy form: two on that
  // path ("published", "consumed"; gather one per member), one through the
  // slots, none on the schedule path (Group::route); a call whose blocks
  // together overflow a slot takes the single copy.
  uint64_t calls_for(grove::coll::Collective collective, size_t slot_need, size_t block) const {
    const size_t from = cma_from(collective);
    // Gather's single copy takes one number per member (docs/shm.md).
    const uint64_t single = collective == grove::coll::Collective::gather ? n() : 2;
    if (from > 0 && block >= from) return single;
    if (fits(slot_need, block)) return 1;
    // Blocks that overflow a slot together take the single copy.
    return from > 0 && block <= max_bytes() ? single : 0;
  }

  void bcast() {
    for (int root = 0; root < size(); ++root) {
      for (size_t bytes : sizes()) {
        const uint32_t s = salt++;
        std::vector<std::byte> buffer =
            rank() == root ? pattern_bytes(root, bytes, s) : std::vector<std::byte>(bytes);
        const std::string what = fmt::format("bcast root {} {} B", root, bytes);
        expect_calls(what, calls_for(grove::coll::Collective::bcast, bytes, bytes),
                     [&] { comm.bcast(std::span(buffer), root); });
        expect_bytes(what, rank(), buffer, pattern_bytes(root, bytes, s));
      }
    }
  }

  void scatter_gather() {
    for (int root = 0; root < size(); ++root) {
      for (size_t block : sizes()) {
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
  }

  void allgather_alltoall() {
    for (bool in_place : {false, true}) {
      for (size_t block : sizes()) {
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
                       pattern_bytes(r, block, s, block * static_cast<size_t>(rank())).data(),
                       block);
        }
      }
    }
  }

  // One shared-memory call below the two-phase threshold, two at and above;
  // three on the single-copy path (operands, chunks, consumed); none on the
  // schedule path.
  uint64_t reduction_calls(size_t bytes) const {
    const size_t from = cma_from(grove::coll::Collective::reduce);
    if (from > 0 && bytes >= from) return 3;
    if (!fits(bytes, bytes)) return 0;
    return bytes >= 4096 ? 2 : 1;
  }

  void reductions() {
    const std::vector<std::pair<Datatype, ReduceOp>> pairs = {
        {Datatype::int32, ReduceOp::sum},    {Datatype::float64, ReduceOp::sum},
        {Datatype::uint8, ReduceOp::bxor},   {Datatype::int64, ReduceOp::max},
        {Datatype::float32, ReduceOp::prod}, {Datatype::uint16, ReduceOp::min}};
    size_t pick = 0;
    // Element counts: one, odd, just under / at the two-phase threshold for
    // 4-byte types, more elements than ranks times a few, the limit.
    for (size_t bytes : {size_t{8}, size_t{24}, size_t{4088}, size_t{4096}, size_t{4096 + 24},
                         size_t{65536}, max_bytes(), max_bytes() + 8}) {
      const auto [type, op] = pairs[pick++ % pairs.size()];
      const size_t element = grove::datatype_size(type);
      const size_t count = bytes / element;
      colls::with_type(type, [&]<class T>() {
        const uint32_t s = salt++;
        const std::vector<std::byte> mine = operand_bytes<T>(rank(), count, op, s);
        const std::vector<std::byte> want = reduced_bytes<T>(size(), count, op, s);
        const uint64_t expected = reduction_calls(bytes);
        for (int root = 0; root < size(); ++root) {
          std::vector<std::byte> recv(rank() == root ? bytes : 0, std::byte{0xEE});
          const std::string what =
              fmt::format("reduce root {} {} x {} {}", root, count, grove::datatype_name(type),
                          grove::reduce_op_name(op));
          expect_calls(what, expected, [&] { comm.reduce(mine, recv, type, op, root); });
          if (rank() == root) expect_bytes(what, rank(), recv, want);
        }
        for (bool in_place : {false, true}) {
          std::vector<std::byte> recv(bytes, std::byte{0xEE});
          const std::string what =
              fmt::format("allreduce {} x {} {}{}", count, grove::datatype_name(type),
                          grove::reduce_op_name(op), in_place ? " in place" : "");
          expect_calls(what, expected, [&] {
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
  }

  // Calls with no barrier between them: a writer can be a call ahead of a
  // reader, so slot buffers are reused while others still read the other.
  void back_to_back() {
    std::vector<std::byte> buffer(100);
    std::vector<std::byte> sum(64);
    for (int i = 0; i < 300; ++i) {
      const int root = i % size();
      const uint32_t s = salt++;
      if (rank() == root) buffer = pattern_bytes(root, buffer.size(), s);
      comm.bcast(std::span(buffer), root);
      expect_bytes(fmt::format("back-to-back bcast {}", i), rank(), buffer,
                   pattern_bytes(root, buffer.size(), s));
      const auto mine = operand_bytes<int32_t>(rank(), 16, ReduceOp::sum, s);
      comm.allreduce(mine, sum, Datatype::int32, ReduceOp::sum);
      expect_bytes(fmt::format("back-to-back allreduce {}", i), rank(), sum,
                   reduced_bytes<int32_t>(size(), 16, ReduceOp::sum, s));
    }
    ++cases;
  }

  // A non-blocking call (schedule path) stays in flight while blocking ones
  // run through shared memory: their waits must keep the transport moving.
  void overlapped() {
    const uint32_t s = salt++;
    std::vector<std::byte> big =
        rank() == 0 ? pattern_bytes(0, 3 << 20, s) : std::vector<std::byte>(3 << 20);
    grove::Request pending = comm.ibcast(std::span(big), 0);
    std::vector<std::byte> small(32);
    for (int i = 0; i < 20; ++i) {
      const auto mine = operand_bytes<int64_t>(rank(), 4, ReduceOp::sum, s + 1);
      comm.allreduce(mine, small, Datatype::int64, ReduceOp::sum);
      expect_bytes("allreduce beside an ibcast", rank(), small,
                   reduced_bytes<int64_t>(size(), 4, ReduceOp::sum, s + 1));
    }
    pending.wait();
    expect_bytes("ibcast beside shared-memory calls", rank(), big, pattern_bytes(0, 3 << 20, s));
    ++cases;
  }

  void run_all() {
    bcast();
    scatter_gather();
    allgather_alltoall();
    reductions();
    back_to_back();
    overlapped();
  }
};

void sub_communicators(Comm& world, int& cases) {
  Comm halves = world.split(world.rank() % 2, world.rank());
  Comm copy = world.dup();
  for (Comm* c : {&halves, &copy}) {
    const bool expect_segment = c->size() > 1;
    if ((c->state().shm != nullptr) != expect_segment) {
      throw std::runtime_error(fmt::format("rank {}: a communicator of {} ranks {} a segment",
                                           world.rank(), c->size(),
                                           expect_segment ? "lacks" : "has"));
    }
    Driver d{*c};
    d.shm_expected = expect_segment;
    d.salt = 1000;
    d.back_to_back();
    // The world in between: each communicator's calls are numbered apart.
    world.barrier();
    d.allgather_alltoall();
    cases += d.cases;
  }
}

void expect_error(const char* mode, grove::Errc code, const std::function<void()>& body) {
  try {
    body();
  } catch (const grove::Error& e) {
    std::printf("rank shm %s: %s: %s\n", mode, std::string(grove::errc_name(e.code())).c_str(),
                e.what());
    std::fflush(stdout);
    if (e.code() != code) throw;
    return;
  }
  throw std::runtime_error(fmt::format("{}: no error", mode));
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  try {
    grove::params::ScopedSet max("shm_max_bytes", "256KiB");
    grove::params::ScopedSet slot("shm_slot_bytes", "256KiB");
    grove::Session session;
    Comm& world = session.world();
    const int rank = world.rank();
    if (mode == "mismatch") {
      std::vector<std::byte> buffer(64);
      if (rank == 0) {
        world.bcast(std::span(buffer), 0);
      } else {
        expect_error("mismatch", grove::Errc::mismatch,
                     [&] { world.allreduce(std::span(buffer), Datatype::int32, ReduceOp::sum); });
      }
      world.barrier();
      // The same through the inline lines (up to 48 B): both calls write
      // theirs, or the root's call goes through its slot while the others
      // wait for its inline line.
      std::vector<std::byte> small(16);
      if (rank == 0) {
        world.bcast(std::span(small), 0);
      } else {
        expect_error("inline mismatch", grove::Errc::mismatch,
                     [&] { world.allreduce(std::span(small), Datatype::int32, ReduceOp::sum); });
      }
      world.barrier();
      std::vector<std::byte> large(1024);
      if (rank == 0) {
        world.bcast(std::span(large), 0);
      } else {
        expect_error("slot against inline", grove::Errc::mismatch,
                     [&] { world.bcast(std::span(small), 0); });
      }
      world.barrier();
      if (rank == 0) std::printf("shm mismatch ok\n");
      return 0;
    }
    if (mode == "timeout") {
      std::vector<std::byte> buffer(64);
      if (rank == 0) {
        // Enters the bcast the others gave up on after their timeout.
        std::this_thread::sleep_for(std::chrono::milliseconds(2500));
        world.bcast(std::span(buffer), 0);
      } else {
        grove::params::ScopedSet bound("timeout_ms", "1000");
        expect_error("timeout", grove::Errc::timeout, [&] { world.bcast(std::span(buffer), 0); });
      }
      world.barrier();
      if (rank == 0) std::printf("shm timeout ok\n");
      return 0;
    }
    if (mode == "departed") {
      if (rank == 1) std::_Exit(3);
      expect_error("departed", grove::Errc::peer_failed, [&] { world.barrier(); });
      if (rank == 0) std::printf("shm departed ok\n");
      std::fflush(stdout);
      std::_Exit(0);  // the finalize barrier would wait for rank 1
    }
    Driver driver{world};
    driver.shm_expected = mode != "off";
    if ((world.state().shm != nullptr) != (driver.shm_expected && world.size() > 1)) {
      throw std::runtime_error(
          fmt::format("rank {}: segment {} expected", rank, driver.shm_expected ? "" : "not"));
    }
    driver.run_all();
    int cases = driver.cases;
    if (driver.shm_expected) sub_communicators(world, cases);
    world.barrier();
    if (rank == 0) std::printf("shm ok: %d ranks, %d cases\n", world.size(), cases);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "shm FAILED: %s\n", e.what());
    return 1;
  }
}
