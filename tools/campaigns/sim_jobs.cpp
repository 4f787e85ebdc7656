#include "campaigns/sim_jobs.hpp"

#include <fmt/format.h>

#include "coll/algorithm.hpp"
#include "coll/allgather.hpp"
#include "coll/allgatherv.hpp"
#include "coll/allreduce.hpp"
#include "coll/alltoall.hpp"
#include "coll/alltoallv.hpp"
#include "coll/barrier.hpp"
#include "coll/bcast.hpp"
#include "coll/gather.hpp"
#include "coll/layout.hpp"
#include "coll/reduce.hpp"
#include "coll/reduce_scatter.hpp"
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
    job.shape = [spec, size, root, bytes](int rank) {
      return coll::bcast_shape(coll::BcastArgs{rank, size, root, bytes, spec});
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

SimJob alltoall_job(const JobShape& s) {
  SimJob job = base_job(s);
  const size_t block = s.bytes;
  const int size = s.size;
  const coll::AlgorithmSpec spec = coll::parse_algorithm("alltoall", s.algorithm);
  job.build = [spec, block, size](int rank) {
    coll::AlltoallArgs args;
    args.rank = rank;
    args.size = size;
    args.block_bytes = block;
    args.algorithm = spec;
    return coll::build_alltoall(args);
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

SimJob alltoallv_job(const JobShape& s) {
  SimJob job = base_job(s);
  const int size = s.size;
  const size_t bytes = s.bytes;
  const coll::AlgorithmSpec spec = coll::parse_algorithm("alltoallv", s.algorithm);
  // Rank i sends vcount(bytes, i, j) bytes to rank j, packed in rank order.
  auto counts_of = [bytes, size](int rank, bool sending) {
    std::vector<size_t> counts(static_cast<size_t>(size));
    for (int p = 0; p < size; ++p)
      counts[static_cast<size_t>(p)] = sending ? vcount(bytes, rank, p) : vcount(bytes, p, rank);
    return counts;
  };
  auto total = [](const std::vector<size_t>& v) {
    size_t t = 0;
    for (size_t x : v)
      t += x;
    return t;
  };
  job.build = [spec, size, counts_of](int rank) {
    coll::AlltoallvArgs args;
    args.rank = rank;
    args.size = size;
    args.send_counts = counts_of(rank, true);
    args.recv_counts = counts_of(rank, false);
    args.algorithm = spec;
    return coll::build_alltoallv(args);
  };
  job.input_bytes = [counts_of, total](int rank) { return total(counts_of(rank, true)); };
  job.output_bytes = [counts_of, total](int rank) { return total(counts_of(rank, false)); };
  // As build_alltoallv lays the counts out: packed in rank order.
  job.layouts = [counts_of](int rank) {
    coll::BlockLayout in = coll::BlockLayout::packed(counts_of(rank, true));
    coll::BlockLayout out = coll::BlockLayout::packed(counts_of(rank, false));
    return RankLayouts{std::move(in.offsets), std::move(in.lengths), std::move(out.offsets),
                       std::move(out.lengths)};
  };
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

// Reductions run on uint8 with sum, which wraps mod 256 exactly: the
// expected result is the byte sum of every rank's contribution.
std::string check_sum(std::span<const std::byte> out, size_t offset, size_t count, int size,
                      int block) {
  for (size_t i = 0; i < count; ++i) {
    unsigned expected = 0;
    for (int from = 0; from < size; ++from)
      expected += static_cast<unsigned>(pattern(from, block, i));
    if (out[offset + i] != static_cast<std::byte>(expected & 0xff))
      return fmt::format("element {} is {}, expected {}", i, static_cast<unsigned>(out[offset + i]),
                         expected & 0xff);
  }
  return {};
}

SimJob reduce_job(const JobShape& s, bool all) {
  SimJob job = base_job(s);
  const size_t count = s.bytes;
  const int size = s.size;
  const int root = all ? -1 : s.root;
  if (all) {
    const coll::AlgorithmSpec spec = coll::parse_algorithm("allreduce", s.algorithm);
    job.build = [spec, count, size](int rank) {
      coll::AllreduceArgs args;
      args.rank = rank;
      args.size = size;
      args.count = count;
      args.dtype = Datatype::uint8;
      args.op = ReduceOp::sum;
      args.algorithm = spec;
      return coll::build_allreduce(args);
    };
  } else {
    const coll::AlgorithmSpec spec = coll::parse_algorithm("reduce", s.algorithm);
    job.build = [spec, count, size, root](int rank) {
      coll::ReduceArgs args;
      args.rank = rank;
      args.size = size;
      args.root = root;
      args.count = count;
      args.dtype = Datatype::uint8;
      args.op = ReduceOp::sum;
      args.algorithm = spec;
      return coll::build_reduce(args);
    };
  }
  job.input_bytes = [count](int) { return count; };
  job.output_bytes = [count](int) { return count; };
  job.fill = [](int rank, std::span<std::byte> in, std::span<std::byte>) {
    fill_block(in, 0, in.size(), rank, 0);
  };
  job.check = [root, size](int rank, std::span<const std::byte> out) -> std::string {
    if (root >= 0 && rank != root) return {};
    return check_sum(out, 0, out.size(), size, 0);
  };
  return job;
}

SimJob reduce_scatter_job(const JobShape& s) {
  SimJob job = base_job(s);
  const size_t count = s.bytes;
  const int size = s.size;
  const coll::AlgorithmSpec spec = coll::parse_algorithm("reduce_scatter", s.algorithm);
  job.build = [spec, count, size](int rank) {
    coll::ReduceScatterArgs args;
    args.rank = rank;
    args.size = size;
    args.count = count;
    args.dtype = Datatype::uint8;
    args.op = ReduceOp::sum;
    args.algorithm = spec;
    return coll::build_reduce_scatter(args);
  };
  job.input_bytes = [count, size](int) { return count * static_cast<size_t>(size); };
  job.output_bytes = [count](int) { return count; };
  job.fill = [count, size](int rank, std::span<std::byte> in, std::span<std::byte>) {
    for (int block = 0; block < size; ++block)
      fill_block(in, static_cast<size_t>(block) * count, count, rank, block);
  };
  job.check = [count, size](int rank, std::span<const std::byte> out) {
    return check_sum(out, 0, count, size, rank);
  };
  return job;
}

}  // namespace

std::vector<std::string> sim_collectives() {
  return {"allgather", "allgatherv", "allreduce", "alltoall", "alltoallv",      "barrier",
          "bcast",     "gather",     "reduce",    "release",  "reduce_scatter", "scatter"};
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
  if (c == "alltoall") return alltoall_job(s);
  if (c == "alltoallv") return alltoallv_job(s);
  if (c == "reduce") return reduce_job(s, false);
  if (c == "allreduce") return reduce_job(s, true);
  if (c == "reduce_scatter") return reduce_scatter_job(s);
  std::string known;
  for (const auto& name : sim_collectives())
    known += (known.empty() ? "" : ", ") + name;
  throw Error(Errc::invalid_argument,
              fmt::format("the simulator knows no collective '{}' (known: {})", c, known));
}

}  // namespace grove::model
