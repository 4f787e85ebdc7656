// Comm::barrier, ibarrier and barrier_init: the front end of src/coll/barrier.cpp.

#include "coll/barrier.hpp"
#include "coll/call.hpp"
#include "grove/comm.hpp"

namespace grove {
namespace {

const params::StringParam barrier_algorithm{
    "barrier_algorithm", "auto",
    "Forces the barrier algorithm (dissemination, knomial:K, flat) or leaves it to auto",
    coll::algorithm_validator("barrier")};

std::shared_ptr<detail::Operation> make_barrier(const Comm& comm) {
  detail::CommState& state = comm.state();
  const coll::AlgorithmSpec spec = coll::resolve_barrier(
      detail::forced_algorithm("barrier", barrier_algorithm.get()), state.size());
  const std::string name = spec.to_string();
  auto schedule = detail::cached_schedule(state, "barrier/" + name, [&] {
    return coll::build_barrier({state.rank(), state.size(), spec});
  });
  return std::make_shared<detail::Operation>(comm.state_ptr(), fmt::format("barrier({})", name),
                                             std::move(schedule), sched::Buffers{}, spec.stamp());
}

}  // namespace

Request Comm::ibarrier() {
  auto operation = make_barrier(*this);
  operation->start();
  return Request(std::move(operation));
}

void Comm::barrier() { ibarrier().wait(); }

Persistent Comm::barrier_init() { return Persistent(make_barrier(*this)); }

}  // namespace grove
