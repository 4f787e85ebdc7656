// Comm::bcast, ibcast and bcast_init: the front end of src/coll/bcast.cpp.

#include "coll/bcast.hpp"
#include "coll/call.hpp"
#include "grove/comm.hpp"

namespace grove {
namespace {

const params::StringParam bcast_algorithm{
    "bcast_algorithm", "auto",
    "Forces the bcast algorithm (flat, chain, pipeline[:seg=S], binary, kary:K, binomial, "
    "knomial:K, scatter_allgather) or leaves it to auto",
    coll::algorithm_validator("bcast")};

std::shared_ptr<detail::Operation> make_bcast(const Comm& comm, std::span<std::byte> buffer,
                                              int root) {
  detail::CommState& state = comm.state();
  detail::check_root(state, "bcast", root);
  const coll::AlgorithmSpec spec = coll::resolve_bcast(
      detail::forced_algorithm("bcast", bcast_algorithm.get()), state.size(), buffer.size());
  const std::string name = spec.to_string();
  auto schedule = detail::cached_schedule(
      state, fmt::format("bcast/{}/{}/{}", name, root, buffer.size()), [&] {
        return coll::build_bcast({state.rank(), state.size(), root, buffer.size(), spec});
      });
  sched::Buffers buffers;
  buffers.output = buffer.data();
  buffers.output_length = buffer.size();
  return std::make_shared<detail::Operation>(
      comm.state_ptr(), fmt::format("bcast(root {}, {} B, {})", root, buffer.size(), name),
      std::move(schedule), buffers, spec.stamp());
}

}  // namespace

Request Comm::ibcast(std::span<std::byte> buffer, int root) {
  auto operation = make_bcast(*this, buffer, root);
  operation->start();
  return Request(std::move(operation));
}

void Comm::bcast(std::span<std::byte> buffer, int root) { ibcast(buffer, root).wait(); }

Persistent Comm::bcast_init(std::span<std::byte> buffer, int root) {
  return Persistent(make_bcast(*this, buffer, root));
}

}  // namespace grove
