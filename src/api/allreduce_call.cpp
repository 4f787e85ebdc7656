// Comm::allreduce, iallreduce and allreduce_init (and their in-place forms):
// the front end of src/coll/allreduce.cpp.

#include "api/front.hpp"
#include "coll/allreduce.hpp"
#include "coll/shm/collectives.hpp"
#include "grove/comm.hpp"

namespace grove {
namespace {

const params::StringParam allreduce_algorithm{
    "allreduce_algorithm", "auto",
    "Forces the allreduce algorithm (recursive_doubling, ring, rabenseifner) or leaves it to auto",
    coll::algorithm_validator("allreduce")};

std::string describe_allreduce(const detail::CallPlan& plan, const sched::Buffers&) {
  return fmt::format("allreduce({} x {} {}{}, {})", plan.shape.count,
                     datatype_name(plan.shape.dtype), reduce_op_name(plan.shape.op),
                     plan.shape.in_place ? ", in place" : "", plan.algorithm);
}

void check_allreduce(detail::CommState& state, std::span<const std::byte> send,
                     std::span<std::byte> recv, Datatype type, ReduceOp op, bool in_place) {
  detail::check_op(state, "allreduce", type, op);
  if (!in_place) {
    detail::check_length(state, "allreduce", "the receive buffer", recv.size(), send.size());
    detail::check_disjoint(state, "allreduce", send, recv);
  }
  detail::check_multiple(state, "allreduce", in_place ? "the in-place buffer" : "the send buffer",
                         recv.size(), datatype_size(type), datatype_name(type));
}

std::shared_ptr<detail::Operation> make_allreduce(const Comm& comm, std::span<const std::byte> send,
                                                  std::span<std::byte> recv, Datatype type,
                                                  ReduceOp op, bool in_place) {
  detail::CommState& state = comm.state();
  check_allreduce(state, send, recv, type, op, in_place);
  const size_t count = recv.size() / datatype_size(type);
  const detail::CallShape shape{.collective = detail::Collective::allreduce,
                                .in_place = in_place,
                                .dtype = type,
                                .op = op,
                                .count = count};
  const auto& plan = detail::plan_call(state, shape, [&](detail::CallPlan& p) {
    const coll::AlgorithmSpec spec =
        coll::resolve_allreduce(detail::forced_algorithm("allreduce", allreduce_algorithm.get()),
                                state.size(), count, type);
    p.set_algorithm(spec);
    p.schedule = std::make_shared<const sched::Schedule>(
        coll::build_allreduce({state.rank(), state.size(), count, type, op, in_place, spec}));
    p.describe = &describe_allreduce;
  });
  return detail::make_operation(
      comm.state_ptr(), plan,
      detail::user_buffers(in_place ? std::span<const std::byte>{} : send, recv));
}

}  // namespace

Request Comm::iallreduce(std::span<const std::byte> send, std::span<std::byte> recv, Datatype type,
                         ReduceOp op) {
  return detail::start_request(make_allreduce(*this, send, recv, type, op, false));
}

void Comm::allreduce(std::span<const std::byte> send, std::span<std::byte> recv, Datatype type,
                     ReduceOp op) {
  check_allreduce(state(), send, recv, type, op, false);
  if (allreduce_algorithm.get() == "auto" && !send.empty() &&
      shm::allreduce(state().shm.get(), send, recv, type, op))
    return;
  iallreduce(send, recv, type, op).wait();
}

Persistent Comm::allreduce_init(std::span<const std::byte> send, std::span<std::byte> recv,
                                Datatype type, ReduceOp op) {
  return Persistent(make_allreduce(*this, send, recv, type, op, false));
}

Request Comm::iallreduce(std::span<std::byte> buffer, Datatype type, ReduceOp op) {
  return detail::start_request(make_allreduce(*this, {}, buffer, type, op, true));
}

void Comm::allreduce(std::span<std::byte> buffer, Datatype type, ReduceOp op) {
  check_allreduce(state(), {}, buffer, type, op, true);
  if (allreduce_algorithm.get() == "auto" &&
      shm::allreduce(state().shm.get(), {}, buffer, type, op))
    return;
  iallreduce(buffer, type, op).wait();
}

Persistent Comm::allreduce_init(std::span<std::byte> buffer, Datatype type, ReduceOp op) {
  return Persistent(make_allreduce(*this, {}, buffer, type, op, true));
}

}  // namespace grove
