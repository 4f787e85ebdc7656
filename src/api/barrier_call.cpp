// Comm::barrier, ibarrier and barrier_init: the front end of src/coll/barrier.cpp.

#include "api/call.hpp"
#include "coll/barrier.hpp"
#include "coll/shm/collectives.hpp"
#include "grove/comm.hpp"

namespace grove {
namespace {

const params::StringParam barrier_algorithm{
    "barrier_algorithm", "auto",
    "Forces the barrier algorithm (dissemination, knomial:K, flat) or leaves it to auto",
    coll::algorithm_validator("barrier")};

std::string describe_barrier(const detail::CallPlan& plan, const sched::Buffers&) {
  return fmt::format("barrier({})", plan.algorithm);
}

std::shared_ptr<detail::Operation> make_barrier(const Comm& comm) {
  detail::CommState& state = comm.state();
  const detail::CallShape shape{.collective = detail::Collective::barrier};
  const auto& plan = detail::plan_call(state, shape, [&](detail::CallPlan& p) {
    const coll::AlgorithmSpec spec = coll::resolve_barrier(
        detail::forced_algorithm("barrier", barrier_algorithm.get()), state.size());
    p.set_algorithm(spec);
    p.schedule = std::make_shared<const sched::Schedule>(
        coll::build_barrier({state.rank(), state.size(), spec}));
    p.describe = &describe_barrier;
  });
  return detail::make_operation(comm.state_ptr(), plan, sched::Buffers{});
}

}  // namespace

Request Comm::ibarrier() {
  return detail::start_request(make_barrier(*this));
}

void Comm::barrier() {
  if (barrier_algorithm.get() == "auto" && shm::barrier(state().shm.get())) return;
  ibarrier().wait();
}

Persistent Comm::barrier_init() {
  return Persistent(make_barrier(*this));
}

}  // namespace grove
