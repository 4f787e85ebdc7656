#pragma once
// The API checks of tests/mp/colls.cpp: several non-blocking collectives in
// flight at once (on one communicator and on split ones), persistent
// operations started 100 times, split/dup, ranks that disagree on the
// algorithm, and argument errors.

#include <string>
#include <vector>

#include "colls_common.hpp"
#include "core/params.hpp"

namespace colls {

using grove::params::ScopedSet;

struct Api {
  grove::Comm& world;
  uint32_t salt = 100000;
  int cases = 0;

  // Starts an allreduce (int64 sum of rank + i) and an allgather on `comm`;
  // returns a check to run after both completed.
  struct Pending {
    std::vector<grove::Request> requests;
    std::vector<std::function<void()>> checks;
  };

  static void start_pair(grove::Comm& comm, const std::string& label, uint32_t s,
                         std::vector<std::vector<std::byte>>& keep, Pending& pending) {
    const size_t count = 1000 + s % 7;
    auto& sum_in = keep.emplace_back(operand_bytes<int64_t>(comm.rank(), count, ReduceOp::sum, s));
    auto& sum_out = keep.emplace_back(count * sizeof(int64_t));
    pending.requests.push_back(comm.iallreduce(sum_in, sum_out, Datatype::int64, ReduceOp::sum));
    const size_t block = 333 + s % 5;
    auto& mine = keep.emplace_back(pattern_bytes(comm.rank(), block, s));
    auto& all = keep.emplace_back(block * static_cast<size_t>(comm.size()));
    pending.requests.push_back(comm.iallgather(mine, all));
    const int n = comm.size();
    const int rank = comm.rank();
    pending.checks.push_back([&sum_out, &all, label, s, count, block, n, rank] {
      expect_bytes(label + " iallreduce", rank, sum_out,
                   reduced_bytes<int64_t>(n, count, ReduceOp::sum, s));
      std::vector<std::byte> want;
      for (int r = 0; r < n; ++r) {
        const auto b = pattern_bytes(r, block, s);
        want.insert(want.end(), b.begin(), b.end());
      }
      expect_bytes(label + " iallgather", rank, all, want);
    });
  }

  // Several collectives of different kinds in flight on the world and on two
  // split communicators at once, completed in reverse order.
  void concurrent() {
    grove::Comm halves = world.split(world.rank() % 2, -world.rank());
    grove::Comm copy = world.dup();
    for (int round = 0; round < 3; ++round) {
      std::vector<std::vector<std::byte>> keep;
      keep.reserve(64);  // references into it stay valid
      Pending pending;
      start_pair(world, "world", salt++, keep, pending);
      start_pair(halves, "split", salt++, keep, pending);
      start_pair(copy, "dup", salt++, keep, pending);
      start_pair(world, "world again", salt++, keep, pending);
      // A bcast and an alltoall too.
      const uint32_t s = salt++;
      auto& bcast = keep.emplace_back(4096);
      if (world.rank() == 1 % world.size()) bcast = pattern_bytes(7, 4096, s);
      pending.requests.push_back(world.ibcast(bcast, 1 % world.size()));
      const size_t block = 17;
      std::vector<std::byte> send_all;
      for (int j = 0; j < world.size(); ++j) {
        const auto b = pattern_bytes(world.rank() * 1000 + j, block, s);
        send_all.insert(send_all.end(), b.begin(), b.end());
      }
      auto& a2a_in = keep.emplace_back(std::move(send_all));
      auto& a2a_out = keep.emplace_back(a2a_in.size());
      pending.requests.push_back(world.ialltoall(a2a_in, a2a_out));
      for (auto it = pending.requests.rbegin(); it != pending.requests.rend(); ++it)
        it->wait();
      for (auto& check : pending.checks)
        check();
      expect_bytes("concurrent ibcast", world.rank(), bcast, pattern_bytes(7, 4096, s));
      std::vector<std::byte> want;
      for (int i = 0; i < world.size(); ++i) {
        const auto b = pattern_bytes(i * 1000 + world.rank(), block, s);
        want.insert(want.end(), b.begin(), b.end());
      }
      expect_bytes("concurrent ialltoall", world.rank(), a2a_out, want);
      ++cases;
    }
  }

  // split: colors by rank mod 3, keys reverse the order; the new ranks and
  // a collective on each part are checked.
  void split_and_dup() {
    const int color = world.rank() % 3;
    grove::Comm part = world.split(color, world.size() - world.rank());
    std::vector<int> members;
    for (int r = world.size() - 1; r >= 0; --r)
      if (r % 3 == color) members.push_back(r);
    if (part.size() != static_cast<int>(members.size()) ||
        members[static_cast<size_t>(part.rank())] != world.rank()) {
      throw std::runtime_error(fmt::format("split: world rank {} got rank {} of {}", world.rank(),
                                           part.rank(), part.size()));
    }
    const uint32_t s = salt++;
    std::vector<std::byte> all(8 * members.size());
    part.allgather(pattern_bytes(world.rank(), 8, s), all);
    std::vector<std::byte> want;
    for (int m : members) {
      const auto b = pattern_bytes(m, 8, s);
      want.insert(want.end(), b.begin(), b.end());
    }
    expect_bytes("split allgather", world.rank(), all, want);
    // A split of the split, and a dup.
    grove::Comm single = part.split(part.rank(), 0);
    grove::Comm twin = part.dup();
    if (single.size() != 1 || single.rank() != 0 || twin.size() != part.size() ||
        twin.rank() != part.rank()) {
      throw std::runtime_error("split of a split / dup: wrong size or rank");
    }
    std::vector<int64_t> value{world.rank()};
    std::vector<int64_t> total(1);
    twin.allreduce<int64_t>(value, total, ReduceOp::sum);
    int64_t want_total = 0;
    for (int m : members)
      want_total += m;
    if (total[0] != want_total) throw std::runtime_error("dup allreduce: wrong sum");
    single.barrier();
    cases += 3;
  }

  static void refill(std::vector<std::byte>& buffer, const std::vector<std::byte>& data) {
    std::copy(data.begin(), data.end(), buffer.begin());
  }

  // Persistent operations, each started 100 times with new data each time.
  void persistent() {
    const size_t count = 513;
    std::vector<std::byte> in(count * sizeof(int32_t)), out(in.size());
    grove::Persistent allreduce = world.allreduce_init(in, out, Datatype::int32, ReduceOp::sum);
    const size_t block = 19;
    std::vector<std::byte> a2a_in(block * static_cast<size_t>(world.size()));
    std::vector<std::byte> a2a_out(a2a_in.size());
    grove::Persistent alltoall = world.alltoall_init(a2a_in, a2a_out);
    std::vector<std::byte> bcast(100);
    grove::Persistent bcaster = world.bcast_init(bcast, 0);
    grove::Persistent barrier = world.barrier_init();
    std::vector<std::byte> gathered(world.rank() == 0 ? block * static_cast<size_t>(world.size())
                                                      : 0);
    std::vector<std::byte> mine(block);
    grove::Persistent gather = world.gather_init(mine, gathered, 0);
    for (int i = 0; i < 100; ++i) {
      const uint32_t s = salt++;
      // Refill in place: the persistent operations hold these buffers.
      refill(in, operand_bytes<int32_t>(world.rank(), count, ReduceOp::sum, s));
      for (int j = 0; j < world.size(); ++j) {
        const auto b = pattern_bytes(world.rank() * 1000 + j, block, s);
        std::copy(b.begin(), b.end(),
                  a2a_in.begin() + static_cast<ptrdiff_t>(block * static_cast<size_t>(j)));
      }
      if (world.rank() == 0) refill(bcast, pattern_bytes(3, bcast.size(), s));
      refill(mine, pattern_bytes(world.rank(), block, s));
      allreduce.start();
      alltoall.start();
      bcaster.start();
      gather.start();
      barrier.start();
      barrier.wait();
      gather.wait();
      bcaster.wait();
      alltoall.wait();
      allreduce.wait();
      expect_bytes(fmt::format("persistent allreduce start {}", i), world.rank(), out,
                   reduced_bytes<int32_t>(world.size(), count, ReduceOp::sum, s));
      std::vector<std::byte> want;
      for (int j = 0; j < world.size(); ++j) {
        const auto b = pattern_bytes(j * 1000 + world.rank(), block, s);
        want.insert(want.end(), b.begin(), b.end());
      }
      expect_bytes(fmt::format("persistent alltoall start {}", i), world.rank(), a2a_out, want);
      expect_bytes(fmt::format("persistent bcast start {}", i), world.rank(), bcast,
                   pattern_bytes(3, bcast.size(), s));
      if (world.rank() == 0) {
        want.clear();
        for (int j = 0; j < world.size(); ++j) {
          const auto b = pattern_bytes(j, block, s);
          want.insert(want.end(), b.begin(), b.end());
        }
        expect_bytes(fmt::format("persistent gather start {}", i), world.rank(), gathered, want);
      }
    }
    cases += 100;
  }

  // Rank 0 runs alltoall `linear`, the others `pairwise`: the same messages
  // under different stamps. Every rank receives one from a rank that
  // disagrees, so every rank must report Errc::mismatch (not hang).
  void disagreement() {
    if (world.size() < 2) return;
    ScopedSet bound("timeout_ms", "30000");
    ScopedSet force("alltoall_algorithm", world.rank() == 0 ? "linear" : "pairwise");
    std::vector<std::byte> send(64 * static_cast<size_t>(world.size())), recv(send.size());
    try {
      world.alltoall(send, recv);
    } catch (const grove::Error& e) {
      if (e.code() != grove::Errc::mismatch) throw;
      const std::string text = e.what();
      if (text.find("alltoall") == std::string::npos ||
          text.find("another collective, algorithm or parameters") == std::string::npos) {
        throw std::runtime_error("mismatch error does not name the call: " + text);
      }
      ++cases;
      return;
    }
    throw std::runtime_error("ranks that disagree on the algorithm completed an alltoall");
  }

  // Bad arguments that every rank passes alike: each must throw
  // grove::Error(invalid_argument) naming the problem, before any message.
  void bad_arguments() {
    auto expect_error = [&](const char* what, const char* needle, auto&& call) {
      try {
        call();
      } catch (const grove::Error& e) {
        if (std::string(e.what()).find(needle) == std::string::npos) {
          throw std::runtime_error(
              fmt::format("{}: error '{}' does not mention '{}'", what, e.what(), needle));
        }
        ++cases;
        return;
      }
      throw std::runtime_error(fmt::format("{}: accepted", what));
    };
    std::vector<std::byte> a(8), b(8 * static_cast<size_t>(world.size()) + 1);
    expect_error("root out of range", "root", [&] { world.scatter(b, a, world.size()); });
    expect_error("receive buffer too small", "receive buffer",
                 [&] { world.allgather(a, std::span(b).first(b.size() - 2)); });
    if (world.size() > 1) {
      expect_error("in-place allgather not divisible", "in-place buffer",
                   [&] { world.allgather(std::span(b)); });
    }
    expect_error("bitwise op on floats", "bxor", [&] {
      world.allreduce(a, std::span(b).first(8), Datatype::float32, ReduceOp::bxor);
    });
    expect_error("partial element", "float64", [&] {
      world.allreduce(std::span(a).first(5), std::span(b).first(5), Datatype::float64,
                      ReduceOp::sum);
    });
    std::vector<size_t> counts(static_cast<size_t>(world.size()) + 1, 1);
    expect_error("allgatherv counts", "counts", [&] { world.allgatherv(a, b, counts); });
    expect_error("overlapping buffers", "overlap", [&] { world.alltoall(b, std::span(b)); });
    expect_error("unknown algorithm name", "known:", [] {
      grove::params::Registry::global().set("allreduce_algorithm", "bogus",
                                            grove::params::Source::api);
    });
    expect_error("radix the algorithm cannot honour", "radix", [] {
      grove::params::Registry::global().set("gather_algorithm", "kary:1",
                                            grove::params::Source::api);
    });
    if (world.size() % 2 == 1 && world.size() > 1) {
      ScopedSet force("allgather_algorithm", "neighbor_exchange");
      expect_error("neighbor_exchange on an odd size", "even number of ranks",
                   [&] { world.allgather(a, std::span(b).first(b.size() - 1)); });
    }
    world.barrier();  // nothing was left in flight
  }

  void run_all() {
    bad_arguments();
    split_and_dup();
    concurrent();
    persistent();
    disagreement();
  }
};

}  // namespace colls
