// Comm::allreduce, iallreduce and allreduce_init (and their in-place forms):
// the front end of src/coll/allreduce.cpp.

#include "coll/allreduce.hpp"
#include "coll/front.hpp"
#include "grove/comm.hpp"

namespace grove {
namespace {

const params::StringParam allreduce_algorithm{
    "allreduce_algorithm", "auto",
    "Forces the allreduce algorithm (recursive_doubling, ring, rabenseifner) or leaves it to auto",
    coll::algorithm_validator("allreduce")};

std::shared_ptr<detail::Operation> make_allreduce(const Comm& comm, std::span<const std::byte> send,
                                                  std::span<std::byte> recv, Datatype type,
                                                  ReduceOp op, bool in_place) {
  detail::CommState& state = comm.state();
  detail::check_op(state, "allreduce", type, op);
  if (!in_place) {
    detail::check_length(state, "allreduce", "the receive buffer", recv.size(), send.size());
    detail::check_disjoint(state, "allreduce", send, recv);
  }
  detail::check_multiple(state, "allreduce", in_place ? "the in-place buffer" : "the send buffer",
                         recv.size(), datatype_size(type), datatype_name(type));
  const size_t count = recv.size() / datatype_size(type);
  const coll::AlgorithmSpec spec = coll::resolve_allreduce(
      detail::forced_algorithm("allreduce", allreduce_algorithm.get()), state.size(), count, type);
  const std::string name = spec.to_string();
  auto schedule = detail::cached_schedule(
      state,
      fmt::format("allreduce/{}/{}/{}/{}/{}", name, count, datatype_name(type), reduce_op_name(op),
                  in_place),
      [&] {
        return coll::build_allreduce({state.rank(), state.size(), count, type, op, in_place, spec});
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
      fmt::format("allreduce({} x {} {}{}, {})", count, datatype_name(type), reduce_op_name(op),
                  in_place ? ", in place" : "", name),
      std::move(schedule), buffers, spec.stamp());
}

}  // namespace

Request Comm::iallreduce(std::span<const std::byte> send, std::span<std::byte> recv, Datatype type,
                         ReduceOp op) {
  auto operation = make_allreduce(*this, send, recv, type, op, false);
  operation->start();
  return Request(std::move(operation));
}

void Comm::allreduce(std::span<const std::byte> send, std::span<std::byte> recv, Datatype type,
                     ReduceOp op) {
  iallreduce(send, recv, type, op).wait();
}

Persistent Comm::allreduce_init(std::span<const std::byte> send, std::span<std::byte> recv,
                                Datatype type, ReduceOp op) {
  return Persistent(make_allreduce(*this, send, recv, type, op, false));
}

Request Comm::iallreduce(std::span<std::byte> buffer, Datatype type, ReduceOp op) {
  auto operation = make_allreduce(*this, {}, buffer, type, op, true);
  operation->start();
  return Request(std::move(operation));
}

void Comm::allreduce(std::span<std::byte> buffer, Datatype type, ReduceOp op) {
  iallreduce(buffer, type, op).wait();
}

Persistent Comm::allreduce_init(std::span<std::byte> buffer, Datatype type, ReduceOp op) {
  return Persistent(make_allreduce(*this, {}, buffer, type, op, true));
}

}  // namespace grove
