#include "model/sim_jobs.hpp"

#include <charconv>

#include <fmt/format.h>

#include "coll/algorithm.hpp"
#include "coll/allgather.hpp"
#include "coll/allgatherv.hpp"
#include "coll/alltoall.hpp"
#include "coll/alltoallv.hpp"
#include "coll/barrier.hpp"
#include "coll/bcast.hpp"
#include "coll/gather.hpp"
#include "coll/scatter.hpp"
#include "grove/error.hpp"
#include "model/release.hpp"

namespace grove::model {
namespace {

// The byte at offset i of the block that rank `from` contributes for rank
// `to`: distinct per (from, to, i) so a misplaced block is caught.
std::byte pattern(int from, int to, size_t i) {
  const uint64_t x =
      (static_cast<uint64_t>(from) * 1000003u + static_cast<uint64_t>(to) * 7919u + i * 131u + 17u);
  return static_cast<std::byte>((x ^ (x >> 8)) & 0xff);
}

void fill_block(std::span<std::byte> out, size_t offset, size_t length, int from, int to) {
  for (size_t i = 0; i < length; ++i)
    out[offset + i] = pattern(from, to, i);
}

std::string check_block(std::span<const std::byte> out, size_t offset, size_t length, int from,
                        int to) {
  for (size_t i = 0; i < length; ++i)
    if (out[offset + i] != pattern(from, to, i))
      return fmt::format("byte {} of the block from rank {} (at offset {}) differs", i, from,
                         offset + i);
  return {};
}

// "name" or "name:K" for the collectives whose files take no spec.
struct NameRadix {
  std::string name;
  int radix = 0;
};
NameRadix split_name(const JobShape& s) {
  NameRadix out;
  const auto colon = s.algorithm.find(':');
  out.name = s.algorithm.substr(0, colon);
  if (colon != std::string::npos) {
    const std::string arg = s.algorithm.substr(colon + 1);
    auto [ptr, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), out.radix);
    if (ec != std::errc() || ptr != arg.data() + arg.size() || out.radix < 1)
      throw Error(Errc::invalid_argument,
                  fmt::format("{}: '{}' is not a positive integer argument in '{}'", s.collective,
                              arg, s.algorithm));
  }
  return out;
}

[[noreturn]] void unknown(const JobShape& s, const char* known) {
  throw Error(Errc::invalid_argument,
              fmt::format("{}: no algorithm '{}' (known: {})", s.collective, s.algorithm, known));
}

SimJob base_job(const JobShape& s) {
  SimJob job;
  job.what = fmt::format("{} {}, {} B, {} ranks", s.collective, s.algorithm, s.bytes, s.size);
  job.size = s.size;
  job.input_bytes = [](int) { return size_t{0}; };
  job.output_bytes = [](int) { return size_t{0}; };
  return job;
}

SimJob bcast_job(const JobShape& s, bool release) {
  SimJob job = base_job(s);
  const size_t bytes = s.bytes;
  const int root = s.root;
  const int size = s.size;
  if (release) {
    const ReleaseShape shape = parse_release(s.algorithm);
    job.build = [shape, size, root, bytes](int rank) {
      return build_release(shape, size, root, rank, bytes);
    };
  } else {
    const coll::AlgorithmSpec spec = coll::parse_algorithm("bcast", s.algorithm);
    job.build = [spec, size, root, bytes](int rank) {
      return coll::build_bcast(coll::BcastArgs{rank, size, root, bytes, spec});
    };
  }
  job.output_bytes = [bytes](int) { return bytes; };
  job.fill = [root](int rank, std::span<std::byte>, std::span<std::byte> out) {
    if (rank == root) fill_block(out, 0, out.size(), root, 0);
  };
  job.check = [root](int, std::span<const std::byte> out) {
    return check_block(out, 0, out.size(), root, 0);
  };
  return job;
}

SimJob barrier_job(const JobShape& s) {
  SimJob job = base_job(s);
  const coll::AlgorithmSpec spec = coll::parse_algorithm("barrier", s.algorithm);
  const int size = s.size;
  job.build = [spec, size](int rank) { return coll::build_barrier({rank, size, spec}); };
  return job;
}

// Collectives where every rank ends with N blocks (allgather) or the root
// does (gather): input = own block, output = N blocks in rank order.
SimJob gathering_job(const JobShape& s, bool all) {
  SimJob job = base_job(s);
  const NameRadix a = split_name(s);
  const size_t block = s.bytes;
  const int size = s.size;
  const int root = all ? 0 : s.root;
  if (all) {
    if (a.name == "ring" || a.name == "recursive_doubling" || a.name == "bruck" ||
        a.name == "neighbor_exchange" || a.name == "gather_bcast") {
      if (a.name == "neighbor_exchange" && size % 2 != 0 && size > 1)
        throw Error(Errc::invalid_argument, "allgather neighbor_exchange needs an even size");
    } else {
      unknown(s, "ring, recursive_doubling, bruck, neighbor_exchange, gather_bcast:K");
    }
    const int radix = a.radix > 0 ? a.radix : 4;
    job.build = [a, radix, block, size](int rank) {
      const coll::AllgatherArgs args{rank, size, block, false};
      if (a.name == "ring") return coll::allgather_ring(args);
      if (a.name == "recursive_doubling") return coll::allgather_recursive_doubling(args);
      if (a.name == "bruck") return coll::allgather_bruck(args);
      if (a.name == "neighbor_exchange") return coll::allgather_neighbor_exchange(args);
      return coll::allgather_gather_bcast(args, radix, radix);
    };
  } else {
    if (a.name != "flat" && a.name != "binomial" && a.name != "kary")
      unknown(s, "flat, binomial, kary:K");
    const int radix = a.radix > 0 ? a.radix : 4;
    job.build = [a, radix, block, size, root](int rank) {
      const coll::GatherArgs args{rank, size, root, block};
      if (a.name == "flat") return coll::gather_flat(args);
      if (a.name == "binomial") return coll::gather_binomial(args);
      return coll::gather_kary(args, radix);
    };
  }
  job.input_bytes = [block](int) { return block; };
  job.output_bytes = [block, size](int) { return block * static_cast<size_t>(size); };
  job.fill = [](int rank, std::span<std::byte> in, std::span<std::byte>) {
    fill_block(in, 0, in.size(), rank, 0);
  };
  job.check = [all, root, block, size](int rank, std::span<const std::byte> out) -> std::string {
    if (!all && rank != root) return {};
    for (int from = 0; from < size; ++from) {
      std::string why = check_block(out, static_cast<size_t>(from) * block, block, from, 0);
      if (!why.empty()) return why;
    }
    return {};
  };
  return job;
}

SimJob scatter_job(const JobShape& s) {
  SimJob job = base_job(s);
  const NameRadix a = split_name(s);
  if (a.name != "flat" && a.name != "binomial" && a.name != "chain")
    unknown(s, "flat, binomial, chain");
  const size_t block = s.bytes;
  const int size = s.size;
  const int root = s.root;
  job.build = [a, block, size, root](int rank) {
    const coll::ScatterArgs args{rank, size, root, block};
    if (a.name == "flat") return coll::scatter_flat(args);
    if (a.name == "binomial") return coll::scatter_binomial(args);
    return coll::scatter_chain(args);
  };
  job.input_bytes = [block, size](int) { return block * static_cast<size_t>(size); };
  job.output_bytes = [block](int) { return block; };
  job.fill = [root, block, size](int rank, std::span<std::byte> in, std::span<std::byte>) {
    if (rank != root) return;
    for (int to = 0; to < size; ++to)
      fill_block(in, static_cast<size_t>(to) * block, block, root, to);
  };
  job.check = [root](int rank, std::span<const std::byte> out) {
    return check_block(out, 0, out.size(), root, rank);
  };
  return job;
}

SimJob alltoall_job(const JobShape& s) {
  SimJob job = base_job(s);
  const NameRadix a = split_name(s);
  if (a.name != "linear" && a.name != "pairwise" && a.name != "bruck")
    unknown(s, "linear, pairwise[:P], bruck");
  const size_t block = s.bytes;
  const int size = s.size;
  job.build = [a, block, size](int rank) {
    const coll::AlltoallArgs args{rank, size, block, false};
    if (a.name == "linear") return coll::alltoall_linear(args);
    if (a.name == "bruck") return coll::alltoall_bruck(args);
    return coll::alltoall_pairwise(
        args, a.radix > 0 ? std::optional<uint32_t>(static_cast<uint32_t>(a.radix)) : std::nullopt);
  };
  const size_t total = block * static_cast<size_t>(size);
  job.input_bytes = [total](int) { return total; };
  job.output_bytes = [total](int) { return total; };
  job.fill = [block, size](int rank, std::span<std::byte> in, std::span<std::byte>) {
    for (int to = 0; to < size; ++to)
      fill_block(in, static_cast<size_t>(to) * block, block, rank, to);
  };
  job.check = [block, size](int rank, std::span<const std::byte> out) -> std::string {
    for (int from = 0; from < size; ++from) {
      std::string why = check_block(out, static_cast<size_t>(from) * block, block, from, rank);
      if (!why.empty()) return why;
    }
    return {};
  };
  return job;
}

// Variable blocks: rank i's block for rank j is bytes + (i + 2j) % 3 bytes.
size_t vcount(size_t bytes, int from, int to) {
  return bytes + static_cast<size_t>((from + 2 * to) % 3);
}

SimJob allgatherv_job(const JobShape& s) {
  SimJob job = base_job(s);
  const NameRadix a = split_name(s);
  if (a.name != "ring" && a.name != "gather_bcast") unknown(s, "ring, gather_bcast:K");
  const int size = s.size;
  std::vector<size_t> counts(static_cast<size_t>(size)), offsets(static_cast<size_t>(size));
  size_t total = 0;
  for (int i = 0; i < size; ++i) {
    counts[static_cast<size_t>(i)] = vcount(s.bytes, i, 0);
    offsets[static_cast<size_t>(i)] = total;
    total += counts[static_cast<size_t>(i)];
  }
  const int radix = a.radix > 0 ? a.radix : 4;
  job.build = [a, radix, counts, size](int rank) {
    const coll::AllgathervArgs args{rank, size, counts, {}, false};
    if (a.name == "ring") return coll::allgatherv_ring(args);
    return coll::allgatherv_gather_bcast(args, radix, radix);
  };
  job.input_bytes = [counts](int rank) { return counts[static_cast<size_t>(rank)]; };
  job.output_bytes = [total](int) { return total; };
  job.fill = [](int rank, std::span<std::byte> in, std::span<std::byte>) {
    fill_block(in, 0, in.size(), rank, 0);
  };
  job.check = [counts, offsets, size](int, std::span<const std::byte> out) -> std::string {
    for (int from = 0; from < size; ++from) {
      std::string why = check_block(out, offsets[static_cast<size_t>(from)],
                                    counts[static_cast<size_t>(from)], from, 0);
      if (!why.empty()) return why;
    }
    return {};
  };
  return job;
}

SimJob alltoallv_job(const JobShape& s) {
  SimJob job = base_job(s);
  const NameRadix a = split_name(s);
  if (a.name != "pairwise") unknown(s, "pairwise[:P]");
  const int size = s.size;
  const size_t bytes = s.bytes;
  // Packed offsets are derived by the builder from the counts.
  auto counts_from = [bytes, size](int rank) {
    std::vector<size_t> send(static_cast<size_t>(size)), recv(static_cast<size_t>(size));
    for (int p = 0; p < size; ++p) {
      send[static_cast<size_t>(p)] = vcount(bytes, rank, p);
      recv[static_cast<size_t>(p)] = vcount(bytes, p, rank);
    }
    return std::pair{send, recv};
  };
  job.build = [a, size, counts_from](int rank) {
    auto [send, recv] = counts_from(rank);
    const coll::AlltoallvArgs args{rank, size, send, {}, recv, {}};
    return coll::alltoallv_pairwise(
        args, a.radix > 0 ? std::optional<uint32_t>(static_cast<uint32_t>(a.radix)) : std::nullopt);
  };
  auto sum = [](const std::vector<size_t>& v) {
    size_t t = 0;
    for (size_t x : v)
      t += x;
    return t;
  };
  job.input_bytes = [counts_from, sum](int rank) { return sum(counts_from(rank).first); };
  job.output_bytes = [counts_from, sum](int rank) { return sum(counts_from(rank).second); };
  job.fill = [bytes, size](int rank, std::span<std::byte> in, std::span<std::byte>) {
    size_t offset = 0;
    for (int to = 0; to < size; ++to) {
      fill_block(in, offset, vcount(bytes, rank, to), rank, to);
      offset += vcount(bytes, rank, to);
    }
  };
  job.check = [bytes, size](int rank, std::span<const std::byte> out) -> std::string {
    size_t offset = 0;
    for (int from = 0; from < size; ++from) {
      std::string why = check_block(out, offset, vcount(bytes, from, rank), from, rank);
      if (!why.empty()) return why;
      offset += vcount(bytes, from, rank);
    }
    return {};
  };
  return job;
}

}  // namespace

std::vector<std::string> sim_collectives() {
  return {"allgather", "allgatherv", "alltoall", "alltoallv", "barrier",
          "bcast",     "gather",     "release",  "scatter"};
}

SimJob make_sim_job(const JobShape& s) {
  if (s.size < 1)
    throw Error(Errc::invalid_argument, fmt::format("{} ranks: need at least 1", s.size));
  if (s.root < 0 || s.root >= s.size)
    throw Error(Errc::invalid_argument, fmt::format("root {} is outside [0, {})", s.root, s.size));
  const std::string& c = s.collective;
  if (c == "bcast") return bcast_job(s, false);
  if (c == "release") return bcast_job(s, true);
  if (c == "barrier") return barrier_job(s);
  if (c == "allgather") return gathering_job(s, true);
  if (c == "gather") return gathering_job(s, false);
  if (c == "scatter") return scatter_job(s);
  if (c == "alltoall") return alltoall_job(s);
  if (c == "allgatherv") return allgatherv_job(s);
  if (c == "alltoallv") return alltoallv_job(s);
  std::string known;
  for (const auto& name : sim_collectives())
    known += (known.empty() ? "" : ", ") + name;
  throw Error(Errc::invalid_argument,
              fmt::format("the simulator knows no collective '{}' (known: {})", c, known));
}

}  // namespace grove::model
