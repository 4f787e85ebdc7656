// Comm::gather, igather and gather_init: the front end of src/coll/gather.cpp.

#include "api/front.hpp"
#include "coll/gather.hpp"
#include "coll/shm/collectives.hpp"
#include "grove/comm.hpp"

namespace grove {
namespace {

const params::StringParam gather_algorithm{
    "gather_algorithm", "auto",
    "Forces the gather algorithm (flat, binomial, kary:K) or leaves it to auto",
    coll::algorithm_validator("gather")};

std::string describe_gather(const detail::CallPlan& plan, const sched::Buffers&) {
  return fmt::format("gather(root {}, {} B per rank, {})", plan.shape.root, plan.shape.count,
                     plan.algorithm);
}

void check_gather(detail::CommState& state, std::span<const std::byte> send,
                  std::span<std::byte> recv, int root) {
  detail::check_root(state, "gather", root);
  if (state.rank() == root) {
    detail::check_length(state, "gather", "the receive buffer", recv.size(),
                         send.size() * static_cast<size_t>(state.size()));
    detail::check_disjoint(state, "gather", send, recv);
  }
}

std::shared_ptr<detail::Operation> make_gather(const Comm& comm, std::span<const std::byte> send,
                                               std::span<std::byte> recv, int root) {
  detail::CommState& state = comm.state();
  check_gather(state, send, recv, root);
  const size_t block = send.size();
  const bool at_root = state.rank() == root;
  const detail::CallShape shape{
      .collective = detail::Collective::gather, .root = root, .count = block};
  const auto& plan = detail::plan_call(state, shape, [&](detail::CallPlan& p) {
    const coll::AlgorithmSpec spec = coll::resolve_gather(
        detail::forced_algorithm("gather", gather_algorithm.get()), state.size(), block);
    p.set_algorithm(spec);
    p.schedule = std::make_shared<const sched::Schedule>(
        coll::build_gather({state.rank(), state.size(), root, block, spec}));
    p.describe = &describe_gather;
  });
  return detail::make_operation(
      comm.state_ptr(), plan, detail::user_buffers(send, at_root ? recv : std::span<std::byte>{}));
}

}  // namespace

Request Comm::igather(std::span<const std::byte> send, std::span<std::byte> recv, int root) {
  return detail::start_request(make_gather(*this, send, recv, root));
}

void Comm::gather(std::span<const std::byte> send, std::span<std::byte> recv, int root) {
  check_gather(state(), send, recv, root);
  if (gather_algorithm.get() == "auto" && shm::gather(state().shm.get(), send, recv, root)) return;
  igather(send, recv, root).wait();
}

Persistent Comm::gather_init(std::span<const std::byte> send, std::span<std::byte> recv, int root) {
  return Persistent(make_gather(*this, send, recv, root));
}

}  // namespace grove
