// Comm::allgather, iallgather and allgather_init (and their in-place forms):
// the front end of src/coll/allgather.cpp.

#include "coll/allgather.hpp"
#include "coll/front.hpp"
#include "grove/comm.hpp"

namespace grove {
namespace {

const params::StringParam allgather_algorithm{
    "allgather_algorithm", "auto",
    "Forces the allgather algorithm (ring, recursive_doubling, bruck, neighbor_exchange, "
    "gather_bcast) or leaves it to auto",
    coll::algorithm_validator("allgather")};

// `send` empty and in_place: the own block is already in `recv`.
std::string describe_allgather(const detail::CallPlan& plan, const sched::Buffers&) {
  return fmt::format("allgather({} B per rank{}, {})", plan.shape.count,
                     plan.shape.in_place ? ", in place" : "", plan.algorithm);
}

std::shared_ptr<detail::Operation> make_allgather(const Comm& comm, std::span<const std::byte> send,
                                                  std::span<std::byte> recv, bool in_place) {
  detail::CommState& state = comm.state();
  const auto n = static_cast<size_t>(state.size());
  size_t block = send.size();
  if (in_place) {
    detail::check_multiple(state, "allgather", "the in-place buffer", recv.size(), n,
                           "blocks of every rank");
    block = recv.size() / n;
  } else {
    detail::check_length(state, "allgather", "the receive buffer", recv.size(), block * n);
    detail::check_disjoint(state, "allgather", send, recv);
  }
  const detail::CallShape shape{
      .collective = detail::Collective::allgather, .in_place = in_place, .count = block};
  const auto& plan = detail::plan_call(state, shape, [&](detail::CallPlan& p) {
    const coll::AlgorithmSpec spec = coll::resolve_allgather(
        detail::forced_algorithm("allgather", allgather_algorithm.get()), state.size(), block);
    p.algorithm = coll::describe_allgather(spec);
    p.stamp = detail::stamp_for("allgather", p.algorithm);
    p.schedule = std::make_shared<const sched::Schedule>(
        coll::build_allgather({state.rank(), state.size(), block, in_place, spec}));
    p.describe = &describe_allgather;
  });
  return detail::make_operation(
      comm.state_ptr(), plan,
      detail::user_buffers(in_place ? std::span<const std::byte>{} : send, recv));
}

}  // namespace

Request Comm::iallgather(std::span<const std::byte> send, std::span<std::byte> recv) {
  return detail::start_request(make_allgather(*this, send, recv, false));
}

void Comm::allgather(std::span<const std::byte> send, std::span<std::byte> recv) {
  iallgather(send, recv).wait();
}

Persistent Comm::allgather_init(std::span<const std::byte> send, std::span<std::byte> recv) {
  return Persistent(make_allgather(*this, send, recv, false));
}

Request Comm::iallgather(std::span<std::byte> buffer) {
  return detail::start_request(make_allgather(*this, {}, buffer, true));
}

void Comm::allgather(std::span<std::byte> buffer) {
  iallgather(buffer).wait();
}

Persistent Comm::allgather_init(std::span<std::byte> buffer) {
  return Persistent(make_allgather(*this, {}, buffer, true));
}

}  // namespace grove
