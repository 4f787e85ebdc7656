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
  const coll::AlgorithmSpec spec = coll::resolve_allgather(
      detail::forced_algorithm("allgather", allgather_algorithm.get()), state.size(), block);
  const std::string name = coll::describe_allgather(spec);
  auto schedule =
      detail::cached_schedule(state, fmt::format("allgather/{}/{}/{}", name, block, in_place), [&] {
        return coll::build_allgather({state.rank(), state.size(), block, in_place, spec});
      });
  sched::Buffers buffers;
  if (!in_place) {
    buffers.input = send.data();
    buffers.input_length = send.size();
  }
  buffers.output = recv.data();
  buffers.output_length = recv.size();
  return std::make_shared<detail::Operation>(
      comm.state_ptr(),
      fmt::format("allgather({} B per rank{}, {})", block, in_place ? ", in place" : "", name),
      std::move(schedule), buffers, detail::stamp_for("allgather", name));
}

}  // namespace

Request Comm::iallgather(std::span<const std::byte> send, std::span<std::byte> recv) {
  auto operation = make_allgather(*this, send, recv, false);
  operation->start();
  return Request(std::move(operation));
}

void Comm::allgather(std::span<const std::byte> send, std::span<std::byte> recv) {
  iallgather(send, recv).wait();
}

Persistent Comm::allgather_init(std::span<const std::byte> send, std::span<std::byte> recv) {
  return Persistent(make_allgather(*this, send, recv, false));
}

Request Comm::iallgather(std::span<std::byte> buffer) {
  auto operation = make_allgather(*this, {}, buffer, true);
  operation->start();
  return Request(std::move(operation));
}

void Comm::allgather(std::span<std::byte> buffer) {
  iallgather(buffer).wait();
}

Persistent Comm::allgather_init(std::span<std::byte> buffer) {
  return Persistent(make_allgather(*this, {}, buffer, true));
}

}  // namespace grove
