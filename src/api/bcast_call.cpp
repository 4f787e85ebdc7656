// Comm::bcast, ibcast and bcast_init: the front end of src/coll/bcast.cpp.

#include "api/call.hpp"
#include "coll/bcast.hpp"
#include "coll/shm/collectives.hpp"
#include "grove/comm.hpp"

namespace grove {
namespace {

const params::StringParam bcast_algorithm{
    "bcast_algorithm", "auto",
    "Forces the bcast algorithm (flat, chain, pipeline[:seg=S], binary, kary:K, binomial, "
    "knomial:K, scatter_allgather) or leaves it to auto",
    coll::algorithm_validator("bcast")};

std::string describe_bcast(const detail::CallPlan& plan, const sched::Buffers&) {
  return fmt::format("bcast(root {}, {} B, {})", plan.shape.root, plan.shape.count, plan.algorithm);
}

std::shared_ptr<detail::Operation> make_bcast(const Comm& comm, std::span<std::byte> buffer,
                                              int root) {
  detail::CommState& state = comm.state();
  detail::check_root(state, "bcast", root);
  const detail::CallShape shape{
      .collective = detail::Collective::bcast, .root = root, .count = buffer.size()};
  const auto& plan = detail::plan_call(state, shape, [&](detail::CallPlan& p) {
    const coll::AlgorithmSpec spec = coll::resolve_bcast(
        detail::forced_algorithm("bcast", bcast_algorithm.get()), state.size(), buffer.size());
    p.set_algorithm(spec);
    p.schedule = std::make_shared<const sched::Schedule>(
        coll::build_bcast({state.rank(), state.size(), root, buffer.size(), spec}));
    p.describe = &describe_bcast;
  });
  return detail::make_operation(comm.state_ptr(), plan, detail::user_buffers({}, buffer));
}

}  // namespace

Request Comm::ibcast(std::span<std::byte> buffer, int root) {
  return detail::start_request(make_bcast(*this, buffer, root));
}

void Comm::bcast(std::span<std::byte> buffer, int root) {
  detail::check_root(state(), "bcast", root);
  if (bcast_algorithm.get() == "auto" && shm::bcast(state().shm.get(), buffer, root)) return;
  ibcast(buffer, root).wait();
}

Persistent Comm::bcast_init(std::span<std::byte> buffer, int root) {
  return Persistent(make_bcast(*this, buffer, root));
}

}  // namespace grove
