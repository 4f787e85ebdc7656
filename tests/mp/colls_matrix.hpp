#pragma once
// The correctness matrix of tests/mp/colls.cpp: every collective x every
// algorithm x sizes (0, 1, odd, > 1 MiB in the largest buffer) x every root
// (up to 8 ranks; 4 roots beyond), bytes checked exactly on every rank.

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "coll/algorithm.hpp"
#include "colls_common.hpp"
#include "core/params.hpp"

namespace colls {

using grove::params::ScopedSet;

// Every algorithm of `collective` (with its default arguments), the extras,
// and auto.
inline std::vector<std::string> algorithms_of(const char* collective,
                                              std::vector<std::string> extras = {}) {
  std::vector<std::string> out = grove::coll::algorithm_examples(collective);
  out.insert(out.end(), extras.begin(), extras.end());
  out.push_back("auto");
  return out;
}

// Sizes in bytes of one rank's block: 0, 1, odd, and one making the whole
// N-block buffer exceed 1 MiB.
inline std::vector<size_t> block_sizes(int n) {
  return {0, 1, 13, (size_t{1} << 20) / static_cast<size_t>(n) + 3};
}

struct Matrix {
  grove::Comm& comm;
  uint32_t salt = 1;
  int cases = 0;
  int rank() const { return comm.rank(); }
  int size() const { return comm.size(); }
  size_t n() const { return static_cast<size_t>(comm.size()); }

  void scatter() {
    for (const std::string& algorithm : algorithms_of("scatter")) {
      ScopedSet force("scatter_algorithm", algorithm);
      for (int root : roots_for(size())) {
        for (size_t block : block_sizes(size())) {
          const uint32_t s = salt++;
          std::vector<std::byte> send;
          if (rank() == root) send = pattern_bytes(root, block * n(), s);
          std::vector<std::byte> recv(block, std::byte{0xEE});
          comm.scatter(send, recv, root);
          expect_bytes(fmt::format("scatter {} root {} {} B", algorithm, root, block), rank(), recv,
                       pattern_bytes(root, block, s, block * static_cast<size_t>(rank())));
          ++cases;
        }
      }
    }
  }

  void gather() {
    for (const std::string& algorithm : algorithms_of("gather", {"kary:2", "kary:64"})) {
      ScopedSet force("gather_algorithm", algorithm);
      for (int root : roots_for(size())) {
        for (size_t block : block_sizes(size())) {
          const uint32_t s = salt++;
          std::vector<std::byte> recv(rank() == root ? block * n() : 0, std::byte{0xEE});
          comm.gather(pattern_bytes(rank(), block, s), recv, root);
          if (rank() == root) {
            std::vector<std::byte> want;
            for (int r = 0; r < size(); ++r) {
              const auto b = pattern_bytes(r, block, s);
              want.insert(want.end(), b.begin(), b.end());
            }
            expect_bytes(fmt::format("gather {} root {} {} B", algorithm, root, block), rank(),
                         recv, want);
          }
          ++cases;
        }
      }
    }
  }

  std::vector<std::byte> all_blocks(size_t block, uint32_t s) const {
    std::vector<std::byte> want;
    for (int r = 0; r < size(); ++r) {
      const auto b = pattern_bytes(r, block, s);
      want.insert(want.end(), b.begin(), b.end());
    }
    return want;
  }

  void allgather() {
    for (const std::string& algorithm : algorithms_of("allgather")) {
      ScopedSet force("allgather_algorithm", algorithm);
      const bool refused = algorithm == "neighbor_exchange" && size() % 2 == 1 && size() > 1;
      for (size_t block : block_sizes(size())) {
        for (bool in_place : {false, true}) {
          const uint32_t s = salt++;
          const std::string what =
              fmt::format("allgather {} {} B{}", algorithm, block, in_place ? " in place" : "");
          std::vector<std::byte> recv(block * n(), std::byte{0xEE});
          const auto mine = pattern_bytes(rank(), block, s);
          try {
            if (in_place) {
              std::copy(mine.begin(), mine.end(),
                        recv.begin() + static_cast<ptrdiff_t>(block * static_cast<size_t>(rank())));
              comm.allgather(std::span(recv));
            } else {
              comm.allgather(mine, recv);
            }
          } catch (const grove::Error& e) {
            // An algorithm the size does not allow is refused on every rank.
            if (!refused || e.code() != grove::Errc::invalid_argument) throw;
            ++cases;
            continue;
          }
          if (refused) throw std::runtime_error(what + ": accepted an odd number of ranks");
          expect_bytes(what, rank(), recv, all_blocks(block, s));
          ++cases;
        }
      }
    }
  }

  void allgatherv() {
    for (const std::string& algorithm : algorithms_of("allgatherv")) {
      ScopedSet force("allgatherv_algorithm", algorithm);
      for (int shape = 0; shape < 4; ++shape) {
        // zeros everywhere; uneven with zeros; only the last rank; > 1 MiB.
        std::vector<size_t> counts(n());
        for (size_t i = 0; i < n(); ++i) {
          counts[i] = shape == 0   ? 0
                      : shape == 1 ? (i % 3 == 1 ? 0 : 7 * i + 1)
                      : shape == 2 ? (i + 1 == n() ? 5 : 0)
                                   : (size_t{1} << 20) / n() + i;
        }
        for (bool gapped : {false, true}) {
          const uint32_t s = salt++;
          std::vector<size_t> offsets;
          size_t extent = std::accumulate(counts.begin(), counts.end(), size_t{0});
          if (gapped) {  // reverse rank order, 2-byte gaps
            size_t at = 1;
            offsets.resize(n());
            for (size_t i = n(); i-- > 0;) {
              offsets[i] = at;
              at += counts[i] + 2;
            }
            extent = at;
          }
          std::vector<std::byte> recv(extent, std::byte{0xEE});
          comm.allgatherv(pattern_bytes(rank(), counts[static_cast<size_t>(rank())], s), recv,
                          counts, offsets);
          std::vector<std::byte> want(extent, std::byte{0xEE});
          size_t packed = 0;
          for (size_t i = 0; i < n(); ++i) {
            const auto b = pattern_bytes(static_cast<int>(i), counts[i], s);
            std::copy(b.begin(), b.end(),
                      want.begin() + static_cast<ptrdiff_t>(gapped ? offsets[i] : packed));
            packed += counts[i];
          }
          expect_bytes(
              fmt::format("allgatherv {} shape {}{}", algorithm, shape, gapped ? " gapped" : ""),
              rank(), recv, want);
          ++cases;
        }
      }
    }
  }

  // Block rank `from` sends to rank `to`.
  static std::vector<std::byte> a2a_block(int from, int to, size_t length, uint32_t s) {
    return pattern_bytes(from, length, s * 977 + static_cast<uint32_t>(to));
  }

  void alltoall() {
    std::vector<std::pair<std::string, std::string>> runs;  // (algorithm, alltoall_posts)
    for (const std::string& a : algorithms_of("alltoall"))
      runs.emplace_back(a, "auto");
    runs.emplace_back("pairwise", "1");
    runs.emplace_back("pairwise", "3");
    for (const auto& [algorithm, posts] : runs) {
      ScopedSet force("alltoall_algorithm", algorithm);
      ScopedSet depth("alltoall_posts", posts);
      for (size_t block : block_sizes(size())) {
        for (bool in_place : {false, true}) {
          const uint32_t s = salt++;
          std::vector<std::byte> send;
          for (int j = 0; j < size(); ++j) {
            const auto b = a2a_block(rank(), j, block, s);
            send.insert(send.end(), b.begin(), b.end());
          }
          std::vector<std::byte> recv(block * n(), std::byte{0xEE});
          if (in_place) {
            recv = send;
            comm.alltoall(std::span(recv));
          } else {
            comm.alltoall(send, recv);
          }
          std::vector<std::byte> want;
          for (int i = 0; i < size(); ++i) {
            const auto b = a2a_block(i, rank(), block, s);
            want.insert(want.end(), b.begin(), b.end());
          }
          expect_bytes(fmt::format("alltoall {} posts {} {} B{}", algorithm, posts, block,
                                   in_place ? " in place" : ""),
                       rank(), recv, want);
          ++cases;
        }
      }
    }
  }

  // Bytes rank i sends rank j in shape `shape`.
  size_t a2av_count(int shape, int i, int j) const {
    switch (shape) {
      case 0:
        return 0;
      case 1:
        return (i + 2 * j) % 3 == 0 ? 0 : static_cast<size_t>(i * 5 + j + 1);
      case 2:
        return i == j ? 3 : 0;
      default:
        return (size_t{1} << 20) / n() + static_cast<size_t>(i + j);
    }
  }

  void alltoallv() {
    for (const std::string& posts : {std::string("auto"), std::string("2")}) {
      ScopedSet depth("alltoall_posts", posts);
      for (int shape = 0; shape < 4; ++shape) {
        const uint32_t s = salt++;
        std::vector<size_t> send_counts(n()), recv_counts(n());
        std::vector<std::byte> send, want;
        for (int j = 0; j < size(); ++j) {
          send_counts[static_cast<size_t>(j)] = a2av_count(shape, rank(), j);
          recv_counts[static_cast<size_t>(j)] = a2av_count(shape, j, rank());
          const auto out = a2a_block(rank(), j, send_counts[static_cast<size_t>(j)], s);
          send.insert(send.end(), out.begin(), out.end());
          const auto in = a2a_block(j, rank(), recv_counts[static_cast<size_t>(j)], s);
          want.insert(want.end(), in.begin(), in.end());
        }
        std::vector<std::byte> recv(want.size(), std::byte{0xEE});
        comm.alltoallv(send, recv, {send_counts, {}, recv_counts, {}});
        expect_bytes(fmt::format("alltoallv posts {} shape {}", posts, shape), rank(), recv, want);
        ++cases;
      }
    }
  }

  // Counts: 0, 1, odd, and "big": > 1 MiB of 4- or 8-byte elements (the
  // big cases take the next pair with such a type). Types and operations
  // rotate through every valid pair.
  static constexpr size_t kBig = ~size_t{0};
  std::vector<size_t> counts() const { return {0, 1, 37, kBig}; }

  // The next (type, op) pair and the element count for `count`.
  std::pair<std::pair<Datatype, ReduceOp>, size_t> next_pair(size_t count,
                                                             size_t per_rank_divisor) {
    static const auto pairs = type_op_pairs();
    auto pair = pairs[pick++ % pairs.size()];
    if (count != kBig) return {pair, count};
    while (grove::datatype_size(pair.first) < 4)
      pair = pairs[pick++ % pairs.size()];
    return {pair, (size_t{1} << 20) / grove::datatype_size(pair.first) / per_rank_divisor + 5};
  }
  size_t pick = 0;

  void reductions() {
    for (const std::string& algorithm : algorithms_of("reduce")) {
      ScopedSet force("reduce_algorithm", algorithm);
      for (int root : roots_for(size())) {
        for (size_t count : counts()) {
          // The big vector at two roots.
          if (count == kBig && root != 0 && root != size() - 1) continue;
          const auto [pair, elements] = next_pair(count, 1);
          reduce_case(algorithm, root, elements, pair);
        }
      }
    }
    for (const std::string& algorithm : algorithms_of("allreduce")) {
      ScopedSet force("allreduce_algorithm", algorithm);
      for (size_t count : counts()) {
        for (bool in_place : {false, true}) {
          const auto [pair, elements] = next_pair(count, 1);
          allreduce_case(algorithm, elements, in_place, pair);
        }
      }
    }
    for (const std::string& algorithm : algorithms_of("reduce_scatter")) {
      ScopedSet force("reduce_scatter_algorithm", algorithm);
      for (size_t count : counts()) {
        const auto [pair, elements] = next_pair(count, n());
        reduce_scatter_case(algorithm, elements, pair);
      }
    }
  }

  void reduce_case(const std::string& algorithm, int root, size_t count,
                   std::pair<Datatype, ReduceOp> pair) {
    const auto [type, op] = pair;
    const uint32_t s = salt++;
    with_type(type, [&]<class T>() {
      std::vector<std::byte> recv(rank() == root ? count * sizeof(T) : 0, std::byte{0xEE});
      comm.reduce(operand_bytes<T>(rank(), count, op, s), recv, type, op, root);
      if (rank() == root) {
        expect_bytes(fmt::format("reduce {} root {} {} x {} {}", algorithm, root, count,
                                 grove::datatype_name(type), grove::reduce_op_name(op)),
                     rank(), recv, reduced_bytes<T>(size(), count, op, s));
      }
    });
    ++cases;
  }

  void allreduce_case(const std::string& algorithm, size_t count, bool in_place,
                      std::pair<Datatype, ReduceOp> pair) {
    const auto [type, op] = pair;
    const uint32_t s = salt++;
    with_type(type, [&]<class T>() {
      const auto mine = operand_bytes<T>(rank(), count, op, s);
      std::vector<std::byte> recv(count * sizeof(T), std::byte{0xEE});
      if (in_place) {
        recv = mine;
        comm.allreduce(std::span(recv), type, op);
      } else {
        comm.allreduce(mine, recv, type, op);
      }
      expect_bytes(
          fmt::format("allreduce {} {} x {} {}{}", algorithm, count, grove::datatype_name(type),
                      grove::reduce_op_name(op), in_place ? " in place" : ""),
          rank(), recv, reduced_bytes<T>(size(), count, op, s));
    });
    ++cases;
  }

  void reduce_scatter_case(const std::string& algorithm, size_t count,
                           std::pair<Datatype, ReduceOp> pair) {
    const auto [type, op] = pair;
    const uint32_t s = salt++;
    with_type(type, [&]<class T>() {
      std::vector<std::byte> recv(count * sizeof(T), std::byte{0xEE});
      comm.reduce_scatter(operand_bytes<T>(rank(), count * n(), op, s), recv, type, op);
      expect_bytes(fmt::format("reduce_scatter {} {} x {} {}", algorithm, count,
                               grove::datatype_name(type), grove::reduce_op_name(op)),
                   rank(), recv,
                   reduced_bytes<T>(size(), count, op, s, count * static_cast<size_t>(rank())));
    });
    ++cases;
  }

  void run_all() {
    scatter();
    gather();
    allgather();
    allgatherv();
    alltoall();
    alltoallv();
    reductions();
  }
};

}  // namespace colls
