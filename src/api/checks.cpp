#include "api/checks.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

#include <fmt/format.h>

#include "grove/error.hpp"

namespace grove::detail {

void fail_root(const CommState& comm, std::string_view collective, int root) {
  throw Error(Errc::invalid_argument,
              fmt::format("rank {}: {}: root {} is out of range for {} ranks", comm.rank(),
                          collective, root, comm.size()));
}

void fail_length(const CommState& comm, std::string_view collective, std::string_view buffer,
                 size_t have, size_t need) {
  throw Error(Errc::invalid_argument,
              fmt::format("rank {}: {}: {} holds {} bytes, the call needs {}", comm.rank(),
                          collective, buffer, have, need));
}

void fail_disjoint(const CommState& comm, std::string_view collective) {
  throw Error(Errc::invalid_argument,
              fmt::format("rank {}: {}: the send and receive buffers overlap (use the in-place "
                          "form)",
                          comm.rank(), collective));
}

void fail_multiple(const CommState& comm, std::string_view collective, std::string_view what,
                   size_t bytes, size_t unit, std::string_view unit_name) {
  throw Error(Errc::invalid_argument,
              fmt::format("rank {}: {}: {} holds {} bytes, not a whole number of {} ({} bytes)",
                          comm.rank(), collective, what, bytes, unit_name, unit));
}

void fail_op(const CommState& comm, std::string_view collective, Datatype type, ReduceOp op) {
  throw Error(Errc::invalid_argument,
              fmt::format("rank {}: {}: operation {} is not defined on {} (bitwise operations "
                          "need an integer type)",
                          comm.rank(), collective, reduce_op_name(op), datatype_name(type)));
}

void check_count_list(const CommState& comm, std::string_view collective, std::string_view what,
                      size_t have) {
  if (have != static_cast<size_t>(comm.size())) {
    throw Error(Errc::invalid_argument,
                fmt::format("rank {}: {}: {} has {} entries for {} ranks", comm.rank(), collective,
                            what, have, comm.size()));
  }
}

void check_blocks(const CommState& comm, std::string_view collective, std::string_view buffer,
                  std::span<const size_t> counts, std::span<const size_t> offsets, size_t length) {
  // (offset, count) of the non-empty blocks. Per thread and kept, so a
  // repeated call allocates nothing once it has seen its number of ranks.
  thread_local std::vector<std::pair<size_t, size_t>> blocks;
  blocks.clear();
  size_t packed = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    const size_t offset = offsets.empty() ? packed : offsets[i];
    packed += counts[i];
    if (offset > length || counts[i] > length - offset) {
      throw Error(Errc::invalid_argument,
                  fmt::format("rank {}: {}: block {} ([{}, +{})) lies outside the {}-byte {}",
                              comm.rank(), collective, i, offset, counts[i], length, buffer));
    }
    if (counts[i] > 0) blocks.emplace_back(offset, counts[i]);
  }
  std::sort(blocks.begin(), blocks.end());
  for (size_t i = 1; i < blocks.size(); ++i) {
    if (blocks[i - 1].first + blocks[i - 1].second > blocks[i].first) {
      throw Error(
          Errc::invalid_argument,
          fmt::format("rank {}: {}: blocks at offsets {} and {} of the {} overlap", comm.rank(),
                      collective, blocks[i - 1].first, blocks[i].first, buffer));
    }
  }
}

}  // namespace grove::detail
