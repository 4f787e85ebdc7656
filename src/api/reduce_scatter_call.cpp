// Comm::reduce_scatter, ireduce_scatter and reduce_scatter_init: the front
// end of src/coll/reduce_scatter.cpp.

#include "api/front.hpp"
#include "coll/reduce_scatter.hpp"
#include "grove/comm.hpp"

namespace grove {
namespace {

const params::StringParam reduce_scatter_algorithm{
    "reduce_scatter_algorithm", "auto",
    "Forces the reduce_scatter algorithm (ring, recursive_halving) or leaves it to auto",
    coll::algorithm_validator("reduce_scatter")};

std::string describe_reduce_scatter(const detail::CallPlan& plan, const sched::Buffers&) {
  return fmt::format("reduce_scatter({} x {} {} per rank, {})", plan.shape.count,
                     datatype_name(plan.shape.dtype), reduce_op_name(plan.shape.op),
                     plan.algorithm);
}

std::shared_ptr<detail::Operation> make_reduce_scatter(const Comm& comm,
                                                       std::span<const std::byte> send,
                                                       std::span<std::byte> recv, Datatype type,
                                                       ReduceOp op) {
  detail::CommState& state = comm.state();
  detail::check_op(state, "reduce_scatter", type, op);
  detail::check_length(state, "reduce_scatter", "the send buffer", send.size(),
                       recv.size() * static_cast<size_t>(state.size()));
  detail::check_multiple(state, "reduce_scatter", "the receive buffer", recv.size(),
                         datatype_size(type), datatype_name(type));
  detail::check_disjoint(state, "reduce_scatter", send, recv);
  const size_t count = recv.size() / datatype_size(type);
  const detail::CallShape shape{
      .collective = detail::Collective::reduce_scatter, .dtype = type, .op = op, .count = count};
  const auto& plan = detail::plan_call(state, shape, [&](detail::CallPlan& p) {
    const coll::AlgorithmSpec spec = coll::resolve_reduce_scatter(
        detail::forced_algorithm("reduce_scatter", reduce_scatter_algorithm.get()), state.size(),
        count, type);
    p.set_algorithm(spec);
    p.schedule = std::make_shared<const sched::Schedule>(
        coll::build_reduce_scatter({state.rank(), state.size(), count, type, op, spec}));
    p.describe = &describe_reduce_scatter;
  });
  sched::Buffers buffers{send.data(), send.size(), recv.data(), recv.size()};
  return detail::make_operation(comm.state_ptr(), plan, buffers);
}

}  // namespace

Request Comm::ireduce_scatter(std::span<const std::byte> send, std::span<std::byte> recv,
                              Datatype type, ReduceOp op) {
  return detail::start_request(make_reduce_scatter(*this, send, recv, type, op));
}

void Comm::reduce_scatter(std::span<const std::byte> send, std::span<std::byte> recv, Datatype type,
                          ReduceOp op) {
  ireduce_scatter(send, recv, type, op).wait();
}

Persistent Comm::reduce_scatter_init(std::span<const std::byte> send, std::span<std::byte> recv,
                                     Datatype type, ReduceOp op) {
  return Persistent(make_reduce_scatter(*this, send, recv, type, op));
}

}  // namespace grove
