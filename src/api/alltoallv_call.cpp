// Comm::alltoallv, ialltoallv and alltoallv_init: the front end of
// src/coll/alltoallv.cpp.

#include <vector>

#include "api/front.hpp"
#include "coll/alltoallv.hpp"
#include "grove/comm.hpp"

namespace grove {
namespace {

const params::StringParam alltoallv_algorithm{
    "alltoallv_algorithm", "auto", "Forces the alltoallv algorithm (pairwise) or leaves it to auto",
    coll::algorithm_validator("alltoallv")};

std::vector<size_t> copy_of(std::span<const size_t> values) {
  return std::vector<size_t>(values.begin(), values.end());
}

// The send buffer's length is not part of the shape (blocks may leave gaps),
// so it comes from the failing call's buffers.
std::string describe_alltoallv(const detail::CallPlan& plan, const sched::Buffers& buffers) {
  return fmt::format("alltoallv({} B to send, {})", buffers.input_length, plan.algorithm);
}

std::shared_ptr<detail::Operation> make_alltoallv(const Comm& comm, std::span<const std::byte> send,
                                                  std::span<std::byte> recv,
                                                  const Comm::AlltoallvLayout& layout) {
  detail::CommState& state = comm.state();
  detail::check_count_list(state, "alltoallv", "send_counts", layout.send_counts.size());
  detail::check_count_list(state, "alltoallv", "recv_counts", layout.recv_counts.size());
  if (!layout.send_offsets.empty())
    detail::check_count_list(state, "alltoallv", "send_offsets", layout.send_offsets.size());
  if (!layout.recv_offsets.empty())
    detail::check_count_list(state, "alltoallv", "recv_offsets", layout.recv_offsets.size());
  detail::check_blocks(state, "alltoallv", "send buffer", layout.send_counts, layout.send_offsets,
                       send.size());
  detail::check_blocks(state, "alltoallv", "receive buffer", layout.recv_counts,
                       layout.recv_offsets, recv.size());
  detail::check_disjoint(state, "alltoallv", send, recv);
  const auto self = static_cast<size_t>(state.rank());
  if (layout.send_counts[self] != layout.recv_counts[self]) {
    throw Error(
        Errc::invalid_argument,
        fmt::format("rank {}: alltoallv: send_counts[{}] = {} but recv_counts[{}] = {} "
                    "(a rank's block to itself)",
                    state.rank(), self, layout.send_counts[self], self, layout.recv_counts[self]));
  }
  const detail::CallShape shape{
      .collective = detail::Collective::alltoallv,
      .lists = {layout.send_counts, layout.send_offsets, layout.recv_counts, layout.recv_offsets}};
  const auto& plan = detail::plan_call(state, shape, [&](detail::CallPlan& p) {
    const coll::AlgorithmSpec spec = coll::resolve_alltoallv(
        detail::forced_algorithm("alltoallv", alltoallv_algorithm.get()), state.size());
    coll::AlltoallvArgs args{state.rank(),
                             state.size(),
                             copy_of(layout.send_counts),
                             copy_of(layout.send_offsets),
                             copy_of(layout.recv_counts),
                             copy_of(layout.recv_offsets),
                             spec,
                             0};
    args.posts = coll::alltoallv_posting_depth(args);
    p.set_algorithm(spec);
    p.schedule = std::make_shared<const sched::Schedule>(coll::build_alltoallv(args));
    p.describe = &describe_alltoallv;
  });
  sched::Buffers buffers{send.data(), send.size(), recv.data(), recv.size()};
  return detail::make_operation(comm.state_ptr(), plan, buffers);
}

}  // namespace

Request Comm::ialltoallv(std::span<const std::byte> send, std::span<std::byte> recv,
                         const AlltoallvLayout& layout) {
  return detail::start_request(make_alltoallv(*this, send, recv, layout));
}

void Comm::alltoallv(std::span<const std::byte> send, std::span<std::byte> recv,
                     const AlltoallvLayout& layout) {
  ialltoallv(send, recv, layout).wait();
}

Persistent Comm::alltoallv_init(std::span<const std::byte> send, std::span<std::byte> recv,
                                const AlltoallvLayout& layout) {
  return Persistent(make_alltoallv(*this, send, recv, layout));
}

}  // namespace grove
