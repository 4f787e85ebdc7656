#include "model/sim_jobs.hpp"

#include <fmt/format.h>

#include "coll/algorithm.hpp"
#include "coll/allgather.hpp"
#include "coll/allgatherv.hpp"
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
  const size_t block = s.bytes;
  const int size = s.size;
  const int root = all ? 0 : s.root;
  const coll::AlgorithmSpec spec = coll::parse_algorithm(s.collective, s.algorithm);
  if (all) {
    job.build = [spec, block, size](int rank) {
      coll::AllgatherArgs args;
      args.rank = rank;
      args.size = size;
      args.block_bytes = block;
      args.algorithm = spec;
      return coll::build_allgather(args);
    };
  } else {
    job.build = [spec, block, size, root](int rank) {
      return coll::build_gather(coll::GatherArgs{rank, size, root, block, spec});
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
  const size_t block = s.bytes;
  const int size = s.size;
  const int root = s.root;
  const coll::AlgorithmSpec spec = coll::parse_algorithm("scatter", s.algorithm);
  job.build = [spec, block, size, root](int rank) {
    return coll::build_scatter(coll::ScatterArgs{rank, size, root, block, spec});
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

// Variable blocks: rank i's block for rank j is bytes + (i + 2j) % 3 bytes.
size_t vcount(size_t bytes, int from, int to) {
  return bytes + static_cast<size_t>((from + 2 * to) % 3);
}

SimJob allgatherv_job(const JobShape& s) {
  SimJob job = base_job(s);
  const int size = s.size;
  std::vector<size_t> counts(static_cast<size_t>(size)), offsets(static_cast<size_t>(size));
  size_t total = 0;
  for (int i = 0; i < size; ++i) {
    counts[static_cast<size_t>(i)] = vcount(s.bytes, i, 0);
    offsets[static_cast<size_t>(i)] = total;
    total += counts[static_cast<size_t>(i)];
  }
  const coll::AlgorithmSpec spec = coll::parse_algorithm("allgatherv", s.algorithm);
  job.build = [spec, counts, size](int rank) {
    coll::AllgathervArgs args;
    args.rank = rank;
    args.size = size;
    args.counts = counts;
    args.algorithm = spec;
    return coll::build_allgatherv(args);
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

}  // namespace

std::vector<std::string> sim_collectives() {
  return {"allgather", "allgatherv", "barrier", "bcast", "gather", "release", "scatter"};
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
  if (c == "allgatherv") return allgatherv_job(s);
  std::string known;
  for (const auto& name : sim_collectives())
    known += (known.empty() ? "" : ", ") + name;
  throw Error(Errc::invalid_argument,
              fmt::format("the simulator knows no collective '{}' (known: {})", c, known));
}

}  // namespace grove::model
