// Comm::scatter, iscatter and scatter_init: the front end of src/coll/scatter.cpp.

#include "coll/front.hpp"
#include "coll/scatter.hpp"
#include "grove/comm.hpp"

namespace grove {
namespace {

const params::StringParam scatter_algorithm{
    "scatter_algorithm", "auto",
    "Forces the scatter algorithm (flat, binomial, chain) or leaves it to auto",
    coll::algorithm_validator("scatter")};

std::shared_ptr<detail::Operation> make_scatter(const Comm& comm, std::span<const std::byte> send,
                                                std::span<std::byte> recv, int root) {
  detail::CommState& state = comm.state();
  detail::check_root(state, "scatter", root);
  const size_t block = recv.size();
  const bool at_root = state.rank() == root;
  if (at_root) {
    detail::check_length(state, "scatter", "the send buffer", send.size(),
                         block * static_cast<size_t>(state.size()));
    detail::check_disjoint(state, "scatter", send, recv);
  }
  const coll::AlgorithmSpec spec = coll::resolve_scatter(
      detail::forced_algorithm("scatter", scatter_algorithm.get()), state.size(), block);
  const std::string name = spec.to_string();
  auto schedule =
      detail::cached_schedule(state, fmt::format("scatter/{}/{}/{}", name, root, block), [&] {
        return coll::build_scatter({state.rank(), state.size(), root, block, spec});
      });
  sched::Buffers buffers;
  if (at_root) {
    buffers.input = send.data();
    buffers.input_length = send.size();
  }
  buffers.output = recv.data();
  buffers.output_length = recv.size();
  return std::make_shared<detail::Operation>(
      comm.state_ptr(), fmt::format("scatter(root {}, {} B per rank, {})", root, block, name),
      std::move(schedule), buffers, spec.stamp());
}

}  // namespace

Request Comm::iscatter(std::span<const std::byte> send, std::span<std::byte> recv, int root) {
  auto operation = make_scatter(*this, send, recv, root);
  operation->start();
  return Request(std::move(operation));
}

void Comm::scatter(std::span<const std::byte> send, std::span<std::byte> recv, int root) {
  iscatter(send, recv, root).wait();
}

Persistent Comm::scatter_init(std::span<const std::byte> send, std::span<std::byte> recv,
                              int root) {
  return Persistent(make_scatter(*this, send, recv, root));
}

}  // namespace grove
