#include "coll/alltoallv.hpp"

#include <fmt/format.h>

#include <numeric>

#include "coll/alltoall.hpp"
#include "coll/checks.hpp"
#include "coll/layout.hpp"
#include "coll/registry.hpp"
#include "grove/error.hpp"

namespace grove::coll {
namespace {

BlockLayout layout_of_counts(const AlltoallvArgs& a, const std::vector<size_t>& counts,
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

void pairwise_v(Plan& plan, const AlltoallvArgs& a, const AlgorithmSpec& spec) {
  const BlockLayout send = layout_of_counts(a, a.send_counts, a.send_offsets, "send");
  const BlockLayout recv = layout_of_counts(a, a.recv_counts, a.recv_offsets, "receive");
  const auto self = static_cast<size_t>(a.rank);
  if (send.lengths[self] != recv.lengths[self]) {
    throw Error(Errc::invalid_argument,
                fmt::format("alltoallv: rank {} sends itself {} bytes but expects {}", a.rank,
                            send.lengths[self], recv.lengths[self]));
  }
  const uint32_t depth = pairwise_depth(a.size, a.posts, spec);
  plan.set_limits(depth, depth);
  // Every rank runs the same steps, one block further along, through its
  // own layouts, where its empty blocks fall at the same relative places
  // (the simulator shares the schedule among such ranks; docs/simulator.md).
  plan.set_rank_layout_symmetry(a.rank, a.size, send, recv);
  plan.copy(block_region(Buffer::input, send, self), block_region(Buffer::output, recv, self));
  for (int i = 1; i < a.size; ++i) {
    const auto to = static_cast<size_t>((a.rank + i) % a.size);
    const auto from = static_cast<size_t>((a.rank - i + a.size) % a.size);
    if (recv.lengths[from] > 0)
      plan.recv(static_cast<int>(from), 0, block_region(Buffer::output, recv, from));
    if (send.lengths[to] > 0)
      plan.send(static_cast<int>(to), 0, block_region(Buffer::input, send, to));
  }
}

const AlgorithmTable<AlltoallvArgs> kAlltoallvAlgorithms{
    Collective::alltoallv,
    {
        {{.name = "pairwise",
          .takes_posts = true,
          .doc = "send to r+i, receive from r-i, at most posts= (or alltoall_posts) in flight",
          .cost = closed_form("(P-1) u(largest block) + L", "as alltoall pairwise", cost::never,
                              0.05, false,
                              [](const CostCase& c, const PortModel& m) {
                                return (c.ranks - 1) * m.u(c.bytes) + m.l(c.bytes);
                              })},
         &pairwise_v},
    }};

}  // namespace

CallFacts facts(const AlltoallvArgs& a) {
  const uint64_t total = std::accumulate(a.send_counts.begin(), a.send_counts.end(), uint64_t{0});
  return CallFacts{.collective = Collective::alltoallv,
                   .ranks = a.size,
                   .bytes = a.size > 0 ? total / static_cast<uint64_t>(a.size) : 0,
                   .total = total,
                   .count = total};
}

sched::Schedule build_alltoallv(const AlltoallvArgs& a) {
  check_rank("alltoallv", a.rank, a.size);
  check_spec("alltoallv", a.algorithm);
  const AlgorithmSpec spec = resolve(facts(a), a.algorithm);
  Plan plan("alltoallv " + spec.to_string());
  kAlltoallvAlgorithms.build(plan, a, spec);
  return plan.finish();
}

}  // namespace grove::coll
