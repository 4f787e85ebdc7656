// Comm::scatter, iscatter and scatter_init: the front end of src/coll/scatter.cpp.

#include "api/front.hpp"
#include "coll/scatter.hpp"
#include "coll/shm/collectives.hpp"
#include "grove/comm.hpp"

namespace grove {
namespace {

const params::StringParam scatter_algorithm{
    "scatter_algorithm", "auto",
    "Forces the scatter algorithm (flat, binomial, chain) or leaves it to auto",
    coll::algorithm_validator("scatter")};

std::string describe_scatter(const detail::CallPlan& plan, const sched::Buffers&) {
  return fmt::format("scatter(root {}, {} B per rank, {})", plan.shape.root, plan.shape.count,
                     plan.algorithm);
}

void check_scatter(detail::CommState& state, std::span<const std::byte> send,
                   std::span<std::byte> recv, int root) {
  detail::check_root(state, "scatter", root);
  if (state.rank() == root) {
    detail::check_length(state, "scatter", "the send buffer", send.size(),
                         recv.size() * static_cast<size_t>(state.size()));
    detail::check_disjoint(state, "scatter", send, recv);
  }
}

std::shared_ptr<detail::Operation> make_scatter(const Comm& comm, std::span<const std::byte> send,
                                                std::span<std::byte> recv, int root) {
  detail::CommState& state = comm.state();
  check_scatter(state, send, recv, root);
  const size_t block = recv.size();
  const bool at_root = state.rank() == root;
  const detail::CallShape shape{
      .collective = detail::Collective::scatter, .root = root, .count = block};
  const auto& plan = detail::plan_call(state, shape, [&](detail::CallPlan& p) {
    const coll::AlgorithmSpec spec = coll::resolve_scatter(
        detail::forced_algorithm("scatter", scatter_algorithm.get()), state.size(), block);
    p.set_algorithm(spec);
    p.schedule = std::make_shared<const sched::Schedule>(
        coll::build_scatter({state.rank(), state.size(), root, block, spec}));
    p.describe = &describe_scatter;
  });
  return detail::make_operation(
      comm.state_ptr(), plan,
      detail::user_buffers(at_root ? send : std::span<const std::byte>{}, recv));
}

}  // namespace

Request Comm::iscatter(std::span<const std::byte> send, std::span<std::byte> recv, int root) {
  return detail::start_request(make_scatter(*this, send, recv, root));
}

void Comm::scatter(std::span<const std::byte> send, std::span<std::byte> recv, int root) {
  check_scatter(state(), send, recv, root);
  if (scatter_algorithm.get() == "auto" && shm::scatter(state().shm.get(), send, recv, root))
    return;
  iscatter(send, recv, root).wait();
}

Persistent Comm::scatter_init(std::span<const std::byte> send, std::span<std::byte> recv,
                              int root) {
  return Persistent(make_scatter(*this, send, recv, root));
}

}  // namespace grove
