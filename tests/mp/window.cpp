// Multi-process driver for typed windows (grove::Window<T>), run by
// `grove run -n N` (tests/mp/tests.cmake). Modes:
//
//   (none)    for every element type: puts into the right neighbour, gets
//             from the left, exact bytes; accumulate of every reduction
//             valid on the type from every rank onto one range of rank 0
//             (exact result); fetch_and_op tickets under contention (every
//             ticket handed out once); a compare_and_swap counter (no lost
//             increment). Prints "window ok: N ranks, C cases".
//   errors    out-of-bounds put/get/accumulate (named rank, offset, length,
//             nothing written), a bad rank, a bitwise op on floats, a
//             closed window.
//   mismatch  rank 0 asks for 16 elements, the others for 17: every rank
//             gets Errc::mismatch naming a rank that differs.
//   departed  after creation rank 1 exits; rank 0's accesses to it fail
//             naming it (run with --on-failure=notify).

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "grove/grove.hpp"

namespace {

using grove::Comm;
using grove::Datatype;
using grove::ReduceOp;
using grove::Window;

// A value of T that is exact in every type (small integers).
template <class T>
T value_of(int rank, size_t i) {
  return static_cast<T>((rank * 13 + static_cast<int>(i) * 5) % 100 + 1);
}

template <class T>
void expect_equal(const std::string& what, size_t i, T got, T want) {
  if (got != want) {
    throw std::runtime_error(fmt::format("{}: element {} is {}, expected {}", what, i,
                                         static_cast<double>(got), static_cast<double>(want)));
  }
}

struct Driver {
  Comm& comm;
  int cases = 0;

  int rank() const { return comm.rank(); }
  int size() const { return comm.size(); }

  template <class T>
  void put_get() {
    constexpr size_t kCount = 37;
    Window<T> w(comm, kCount);
    const int right = (rank() + 1) % size();
    const int left = (rank() - 1 + size()) % size();
    std::vector<T> out(kCount - 3);
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = value_of<T>(rank(), i);
    w.put(right, 2, out);  // elements [2, 36) of the right neighbour
    w.flush(right);
    comm.barrier();
    const std::string name = fmt::format("put {}", grove::datatype_name(grove::datatype_of<T>()));
    for (size_t i = 0; i < kCount; ++i) {
      const T want = i >= 2 && i < kCount - 1 ? value_of<T>(left, i - 2) : T{};
      expect_equal(name, i, w.local()[i], want);
    }
    std::vector<T> in(5);
    w.get(left, 30, in);  // what rank left's left neighbour put there
    const int left2 = (left - 1 + size()) % size();
    for (size_t i = 0; i < in.size(); ++i) {
      const T want = 30 + i < kCount - 1 ? value_of<T>(left2, 28 + i) : T{};
      expect_equal("get", i, in[i], want);
    }
    comm.barrier();
    w.close();
    ++cases;
  }

  // Every rank accumulates its operand onto rank 0's elements [0, 8) with
  // `op`, 20 times; the result is checked against the sequential fold.
  template <class T>
  void accumulate(ReduceOp op) {
    constexpr size_t kCount = 8;
    constexpr int kRounds = 20;
    Window<T> w(comm, kCount);
    if (rank() == 0) {
      std::vector<T> start(kCount, static_cast<T>(op == ReduceOp::prod ? 1 : 3));
      w.put(0, 0, start);
      w.flush(0);
    }
    comm.barrier();
    std::vector<T> operand(kCount);
    for (size_t i = 0; i < kCount; ++i)
      operand[i] = op == ReduceOp::prod ? static_cast<T>(i % 2 == 0 ? 1 : (rank() % 2) + 1)
                                        : static_cast<T>((rank() + static_cast<int>(i)) % 4 + 1);
    // One-byte types stay within range: 3 + 5 rounds x 4 x 5 ranks < 128.
    const int rounds = op == ReduceOp::prod ? 1 : sizeof(T) == 1 ? 5 : kRounds;
    for (int k = 0; k < rounds; ++k)
      w.accumulate(0, 0, operand, op);
    w.flush(0);
    comm.barrier();
    if (rank() == 0) {
      for (size_t i = 0; i < kCount; ++i) {
        T want = static_cast<T>(op == ReduceOp::prod ? 1 : 3);
        for (int r = 0; r < size(); ++r) {
          const T x = op == ReduceOp::prod ? static_cast<T>(i % 2 == 0 ? 1 : (r % 2) + 1)
                                           : static_cast<T>((r + static_cast<int>(i)) % 4 + 1);
          for (int k = 0; k < rounds; ++k) {
            switch (op) {
              case ReduceOp::sum:
                want = static_cast<T>(want + x);
                break;
              case ReduceOp::prod:
                want = static_cast<T>(want * x);
                break;
              case ReduceOp::min:
                want = std::min(want, x);
                break;
              case ReduceOp::max:
                want = std::max(want, x);
                break;
              default:
                break;
            }
            if constexpr (std::is_integral_v<T>) {
              switch (op) {
                case ReduceOp::band:
                  want = static_cast<T>(want & x);
                  break;
                case ReduceOp::bor:
                  want = static_cast<T>(want | x);
                  break;
                case ReduceOp::bxor:
                  want = static_cast<T>(want ^ x);
                  break;
                default:
                  break;
              }
            }
          }
        }
        expect_equal(fmt::format("accumulate {} {}", grove::reduce_op_name(op),
                                 grove::datatype_name(grove::datatype_of<T>())),
                     i, w.local()[i], want);
      }
    }
    comm.barrier();
    w.close();
    ++cases;
  }

  template <class T>
  void accumulates() {
    accumulate<T>(ReduceOp::sum);
    accumulate<T>(ReduceOp::prod);
    accumulate<T>(ReduceOp::min);
    accumulate<T>(ReduceOp::max);
    if constexpr (std::is_integral_v<T>) {
      accumulate<T>(ReduceOp::band);
      accumulate<T>(ReduceOp::bor);
      accumulate<T>(ReduceOp::bxor);
    }
  }

  template <class T>
  void every_op() {
    put_get<T>();
    accumulates<T>();
  }

  // 100 tickets per rank from one counter on the last rank: every value
  // 0 .. 100 n - 1 handed out exactly once.
  void tickets() {
    constexpr int kPer = 100;
    Window<int64_t> w(comm, 4);
    const int owner = size() - 1;
    std::vector<int64_t> mine;
    for (int k = 0; k < kPer; ++k)
      mine.push_back(w.fetch_and_op(owner, 1, 1, ReduceOp::sum));
    std::vector<int64_t> all(static_cast<size_t>(kPer * size()));
    comm.allgather(std::span<const int64_t>(mine), std::span(all));
    std::set<int64_t> seen(all.begin(), all.end());
    if (seen.size() != all.size() || *seen.begin() != 0 ||
        *seen.rbegin() != static_cast<int64_t>(all.size()) - 1) {
      throw std::runtime_error(fmt::format("tickets: {} distinct of {}", seen.size(), all.size()));
    }
    // fetch_and_op of a non-native op (max) on a small type, under contention.
    Window<int16_t> m(comm, 3);
    for (int k = 0; k < 50; ++k)
      (void)m.fetch_and_op(owner, 1, static_cast<int16_t>(rank() * 50 + k), ReduceOp::max);
    comm.barrier();
    if (rank() == owner) expect_equal("fetch max", 1, m.local()[1], int16_t(size() * 50 - 1));
    comm.barrier();
    m.close();
    w.close();
    ++cases;
  }

  // A counter incremented 50 times per rank with compare_and_swap loops.
  template <class T>
  void cas_counter() {
    Window<T> w(comm, 3);
    const int owner = 0;
    int retries = 0;
    for (int k = 0; k < 50; ++k) {
      T seen = T{};
      for (;;) {
        const T old = w.compare_and_swap(owner, 2, seen, static_cast<T>(seen + 1));
        if (old == seen) break;
        seen = old;
        ++retries;
      }
    }
    comm.barrier();
    if (rank() == owner) expect_equal("cas counter", 2, w.local()[2], static_cast<T>(50 * size()));
    comm.barrier();
    w.close();
    ++cases;
  }

  void run_all() {
    every_op<int8_t>();
    every_op<uint8_t>();
    every_op<int16_t>();
    every_op<uint16_t>();
    every_op<int32_t>();
    every_op<uint32_t>();
    every_op<int64_t>();
    every_op<uint64_t>();
    every_op<float>();
    every_op<double>();
    tickets();
    cas_counter<int32_t>();
    cas_counter<int64_t>();
    cas_counter<uint8_t>();
  }
};

void expect_error(const char* what, grove::Errc code, const std::function<void()>& body) {
  try {
    body();
  } catch (const grove::Error& e) {
    std::printf("window %s: %s: %s\n", what, std::string(grove::errc_name(e.code())).c_str(),
                e.what());
    std::fflush(stdout);
    if (e.code() != code) throw;
    return;
  }
  throw std::runtime_error(fmt::format("{}: no error", what));
}

void errors(Comm& world) {
  Window<int32_t> w(world, 16);
  const int right = (world.rank() + 1) % world.size();
  std::vector<int32_t> four(4, 7);
  expect_error("put out of bounds", grove::Errc::invalid_argument, [&] { w.put(right, 13, four); });
  expect_error("get out of bounds", grove::Errc::invalid_argument, [&] { w.get(right, 17, four); });
  expect_error("accumulate out of bounds", grove::Errc::invalid_argument,
               [&] { w.accumulate(right, 15, four, ReduceOp::sum); });
  expect_error("bad rank", grove::Errc::invalid_argument, [&] { w.put(world.size(), 0, four); });
  world.barrier();
  // Nothing was written by the refused calls.
  for (size_t i = 0; i < 16; ++i)
    expect_equal("after refused puts", i, w.local()[i], 0);
  Window<float> f(world, 4);
  expect_error("bitwise on float", grove::Errc::invalid_argument,
               [&] { (void)f.fetch_and_op(right, 0, 1.0f, ReduceOp::bxor); });
  f.close();
  w.close();
  expect_error("closed", grove::Errc::invalid_argument, [&] { w.put(right, 0, four); });
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  try {
    grove::Session session;
    Comm& world = session.world();
    if (mode == "errors") {
      errors(world);
      world.barrier();
      if (world.rank() == 0) std::printf("window errors ok\n");
      return 0;
    }
    if (mode == "mismatch") {
      expect_error("mismatch", grove::Errc::mismatch,
                   [&] { Window<int32_t> w(world, world.rank() == 0 ? 16 : 17); });
      world.barrier();
      if (world.rank() == 0) std::printf("window mismatch ok\n");
      return 0;
    }
    if (mode == "departed") {
      Window<int64_t> w(world, 8);
      world.barrier();
      if (world.rank() == 1) std::_Exit(3);
      if (world.rank() == 0) {
        // The departure is learnt from a failure notice: retry until it is.
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        std::vector<int64_t> in(2);
        for (;;) {
          try {
            w.get(1, 0, in);
          } catch (const grove::Error& e) {
            std::printf("window departed: %s: %s\n",
                        std::string(grove::errc_name(e.code())).c_str(), e.what());
            if (e.code() != grove::Errc::peer_failed) throw;
            break;
          }
          if (std::chrono::steady_clock::now() > until)
            throw std::runtime_error("departed: rank 1's exit was never reported");
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        std::printf("window departed ok\n");
      }
      std::fflush(stdout);
      std::_Exit(0);
    }
    Driver driver{world};
    driver.run_all();
    world.barrier();
    if (world.rank() == 0)
      std::printf("window ok: %d ranks, %d cases\n", world.size(), driver.cases);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "window FAILED: %s\n", e.what());
    return 1;
  }
}
