// Comm::allgatherv, iallgatherv and allgatherv_init: the front end of
// src/coll/allgatherv.cpp.

#include <numeric>
#include <vector>

#include "api/front.hpp"
#include "coll/allgatherv.hpp"
#include "grove/comm.hpp"

namespace grove {
namespace {

const params::StringParam allgatherv_algorithm{
    "allgatherv_algorithm", "auto",
    "Forces the allgatherv algorithm (ring, gather_bcast) or leaves it to auto",
    coll::algorithm_validator("allgatherv")};

std::string describe_allgatherv(const detail::CallPlan& plan, const sched::Buffers&) {
  return fmt::format("allgatherv({} B in all, {})", plan.shape.count, plan.algorithm);
}

std::shared_ptr<detail::Operation> make_allgatherv(const Comm& comm,
                                                   std::span<const std::byte> send,
                                                   std::span<std::byte> recv,
                                                   std::span<const size_t> counts,
                                                   std::span<const size_t> offsets) {
  detail::CommState& state = comm.state();
  detail::check_count_list(state, "allgatherv", "counts", counts.size());
  if (!offsets.empty()) detail::check_count_list(state, "allgatherv", "offsets", offsets.size());
  detail::check_length(state, "allgatherv", "the send buffer", send.size(),
                       counts[static_cast<size_t>(state.rank())]);
  detail::check_blocks(state, "allgatherv", "receive buffer", counts, offsets, recv.size());
  detail::check_disjoint(state, "allgatherv", send, recv);
  const size_t total = std::accumulate(counts.begin(), counts.end(), size_t{0});
  const detail::CallShape shape{
      .collective = detail::Collective::allgatherv, .count = total, .lists = {counts, offsets}};
  const auto& plan = detail::plan_call(state, shape, [&](detail::CallPlan& p) {
    const coll::AlgorithmSpec spec = coll::resolve_allgatherv(
        detail::forced_algorithm("allgatherv", allgatherv_algorithm.get()), state.size(), total);
    p.algorithm = coll::describe_allgatherv(spec);
    p.stamp = detail::stamp_for("allgatherv", p.algorithm);
    coll::AllgathervArgs args{state.rank(),
                              state.size(),
                              std::vector<size_t>(counts.begin(), counts.end()),
                              std::vector<size_t>(offsets.begin(), offsets.end()),
                              false,
                              spec};
    p.schedule = std::make_shared<const sched::Schedule>(coll::build_allgatherv(args));
    p.describe = &describe_allgatherv;
  });
  sched::Buffers buffers{send.data(), send.size(), recv.data(), recv.size()};
  return detail::make_operation(comm.state_ptr(), plan, buffers);
}

}  // namespace

Request Comm::iallgatherv(std::span<const std::byte> send, std::span<std::byte> recv,
                          std::span<const size_t> counts, std::span<const size_t> offsets) {
  return detail::start_request(make_allgatherv(*this, send, recv, counts, offsets));
}

void Comm::allgatherv(std::span<const std::byte> send, std::span<std::byte> recv,
                      std::span<const size_t> counts, std::span<const size_t> offsets) {
  iallgatherv(send, recv, counts, offsets).wait();
}

Persistent Comm::allgatherv_init(std::span<const std::byte> send, std::span<std::byte> recv,
                                 std::span<const size_t> counts, std::span<const size_t> offsets) {
  return Persistent(make_allgatherv(*this, send, recv, counts, offsets));
}

}  // namespace grove
