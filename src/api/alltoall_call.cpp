// Comm::alltoall, ialltoall and alltoall_init (and their in-place forms):
// the front end of src/coll/alltoall.cpp.

#include "api/front.hpp"
#include "coll/alltoall.hpp"
#include "coll/shm/collectives.hpp"
#include "grove/comm.hpp"

namespace grove {
namespace {

const params::StringParam alltoall_algorithm{
    "alltoall_algorithm", "auto",
    "Forces the alltoall algorithm (linear, pairwise, bruck) or leaves it to auto",
    coll::algorithm_validator("alltoall")};

std::string describe_alltoall(const detail::CallPlan& plan, const sched::Buffers&) {
  return fmt::format("alltoall({} B per block{}, {})", plan.shape.count,
                     plan.shape.in_place ? ", in place" : "", plan.algorithm);
}

// Returns the block size.
size_t check_alltoall(detail::CommState& state, std::span<const std::byte> send,
                      std::span<std::byte> recv, bool in_place) {
  const auto n = static_cast<size_t>(state.size());
  if (!in_place) {
    detail::check_length(state, "alltoall", "the receive buffer", recv.size(), send.size());
    detail::check_disjoint(state, "alltoall", send, recv);
  }
  detail::check_multiple(state, "alltoall", in_place ? "the in-place buffer" : "the send buffer",
                         recv.size(), n, "blocks of every rank");
  return recv.size() / n;
}

std::shared_ptr<detail::Operation> make_alltoall(const Comm& comm, std::span<const std::byte> send,
                                                 std::span<std::byte> recv, bool in_place) {
  detail::CommState& state = comm.state();
  const size_t block = check_alltoall(state, send, recv, in_place);
  const detail::CallShape shape{
      .collective = detail::Collective::alltoall, .in_place = in_place, .count = block};
  const auto& plan = detail::plan_call(state, shape, [&](detail::CallPlan& p) {
    const coll::AlgorithmSpec spec = coll::resolve_alltoall(
        detail::forced_algorithm("alltoall", alltoall_algorithm.get()), state.size(), block);
    // The posting depth only bounds this rank's own messages: it is part of
    // the schedule but not of the stamp.
    const uint32_t posts = spec.name == "pairwise"
                               ? coll::alltoall_posting_depth(
                                     state.size(), block, block * static_cast<size_t>(state.size()))
                               : 0;
    p.set_algorithm(spec);
    p.schedule = std::make_shared<const sched::Schedule>(
        coll::build_alltoall({state.rank(), state.size(), block, in_place, spec, posts}));
    p.describe = &describe_alltoall;
  });
  return detail::make_operation(
      comm.state_ptr(), plan,
      detail::user_buffers(in_place ? std::span<const std::byte>{} : send, recv));
}

}  // namespace

Request Comm::ialltoall(std::span<const std::byte> send, std::span<std::byte> recv) {
  return detail::start_request(make_alltoall(*this, send, recv, false));
}

void Comm::alltoall(std::span<const std::byte> send, std::span<std::byte> recv) {
  check_alltoall(state(), send, recv, false);
  if (alltoall_algorithm.get() == "auto" && !send.empty() &&
      shm::alltoall(state().shm.get(), send, recv))
    return;
  ialltoall(send, recv).wait();
}

Persistent Comm::alltoall_init(std::span<const std::byte> send, std::span<std::byte> recv) {
  return Persistent(make_alltoall(*this, send, recv, false));
}

Request Comm::ialltoall(std::span<std::byte> buffer) {
  return detail::start_request(make_alltoall(*this, {}, buffer, true));
}

void Comm::alltoall(std::span<std::byte> buffer) {
  check_alltoall(state(), {}, buffer, true);
  if (alltoall_algorithm.get() == "auto" && shm::alltoall(state().shm.get(), {}, buffer)) return;
  ialltoall(buffer).wait();
}

Persistent Comm::alltoall_init(std::span<std::byte> buffer) {
  return Persistent(make_alltoall(*this, {}, buffer, true));
}

}  // namespace grove
