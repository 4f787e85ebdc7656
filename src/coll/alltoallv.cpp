#include "coll/alltoallv.hpp"

#include <fmt/format.h>

#include "coll/layout.hpp"
#include "coll/plan.hpp"
#include "grove/error.hpp"
#include "model/posting_depth.hpp"

namespace grove::coll {
namespace {

BlockLayout layout_of(const AlltoallvArgs& a, const std::vector<size_t>& counts,
                      const std::vector<size_t>& offsets, const char* what) {
  if (counts.size() != static_cast<size_t>(a.size)) {
    throw Error(Errc::invalid_argument,
                fmt::format("alltoallv: {} {} counts for {} ranks", counts.size(), what, a.size));
  }
  if (offsets.empty()) return BlockLayout::packed(counts);
  if (offsets.size() != counts.size()) {
    throw Error(Errc::invalid_argument,
                fmt::format("alltoallv: {} {} offsets for {} ranks", offsets.size(), what, a.size));
  }
  return BlockLayout{offsets, counts};
}

}  // namespace

sched::Schedule alltoallv_pairwise(const AlltoallvArgs& a, std::optional<uint32_t> posts) {
  const BlockLayout send = layout_of(a, a.send_counts, a.send_offsets, "send");
  const BlockLayout recv = layout_of(a, a.recv_counts, a.recv_offsets, "receive");
  const auto self = static_cast<size_t>(a.rank);
  if (send.lengths[self] != recv.lengths[self]) {
    throw Error(Errc::invalid_argument,
                fmt::format("alltoallv: rank {} sends itself {} bytes but expects {}", a.rank,
                            send.lengths[self], recv.lengths[self]));
  }
  const uint64_t total = send.total();
  const uint32_t depth = model::resolve_posting_depth(posts, static_cast<uint32_t>(a.size),
                                                      total / static_cast<uint64_t>(a.size), total);
  Plan plan(fmt::format("alltoallv:pairwise(posts={})", depth));
  plan.set_limits(depth, depth);
  plan.copy(input_region(send.offsets[self], send.lengths[self]),
            output_region(recv.offsets[self], recv.lengths[self]));
  for (int i = 1; i < a.size; ++i) {
    const auto to = static_cast<size_t>((a.rank + i) % a.size);
    const auto from = static_cast<size_t>((a.rank - i + a.size) % a.size);
    if (recv.lengths[from] > 0) {
      plan.recv(static_cast<int>(from), 0, output_region(recv.offsets[from], recv.lengths[from]));
    }
    if (send.lengths[to] > 0)
      plan.send(static_cast<int>(to), 0, input_region(send.offsets[to], send.lengths[to]));
  }
  return plan.finish();
}

}  // namespace grove::coll
