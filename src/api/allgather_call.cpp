// Comm::allgather, iallgather and allgather_init (and their in-place forms):
// the front end of src/coll/allgather.cpp.

#include "api/front.hpp"
#include "coll/allgather.hpp"
#include "coll/shm/collectives.hpp"
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

// Returns the block size.
size_t check_allgather(detail::CommState& state, std::span<const std::byte> send,
                       std::span<std::byte> recv, bool in_place) {
  const auto n = static_cast<size_t>(state.size());
  if (in_place) {
    detail::check_multiple(state, "allgather", "the in-place buffer", recv.size(), n,
                           "blocks of every rank");
    return recv.size() / n;
  }
  detail::check_length(state, "allgather", "the receive buffer", recv.size(), send.size() * n);
  detail::check_disjoint(state, "allgather", send, recv);
  return send.size();
}

std::shared_ptr<detail::Operation> make_allgather(const Comm& comm, std::span<const std::byte> send,
                                                  std::span<std::byte> recv, bool in_place) {
  detail::CommState& state = comm.state();
  const size_t block = check_allgather(state, send, recv, in_place);
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
  check_allgather(state(), send, recv, false);
  if (allgather_algorithm.get() == "auto" && !send.empty() &&
      shm::allgather(state().shm.get(), send, recv))
    return;
  iallgather(send, recv).wait();
}

Persistent Comm::allgather_init(std::span<const std::byte> send, std::span<std::byte> recv) {
  return Persistent(make_allgather(*this, send, recv, false));
}

Request Comm::iallgather(std::span<std::byte> buffer) {
  return detail::start_request(make_allgather(*this, {}, buffer, true));
}

void Comm::allgather(std::span<std::byte> buffer) {
  check_allgather(state(), {}, buffer, true);
  if (allgather_algorithm.get() == "auto" && shm::allgather(state().shm.get(), {}, buffer)) return;
  iallgather(buffer).wait();
}

Persistent Comm::allgather_init(std::span<std::byte> buffer) {
  return Persistent(make_allgather(*this, {}, buffer, true));
}

}  // namespace grove
