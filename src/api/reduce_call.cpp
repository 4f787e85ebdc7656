// Comm::reduce, ireduce and reduce_init: the front end of src/coll/reduce.cpp.

#include "api/front.hpp"
#include "coll/reduce.hpp"
#include "coll/shm/collectives.hpp"
#include "grove/comm.hpp"

namespace grove {
namespace {

const params::StringParam reduce_algorithm{
    "reduce_algorithm", "auto",
    "Forces the reduce algorithm (binomial, rabenseifner) or leaves it to auto",
    coll::algorithm_validator("reduce")};

std::string describe_reduce(const detail::CallPlan& plan, const sched::Buffers&) {
  return fmt::format("reduce(root {}, {} x {} {}, {})", plan.shape.root, plan.shape.count,
                     datatype_name(plan.shape.dtype), reduce_op_name(plan.shape.op),
                     plan.algorithm);
}

void check_reduce(detail::CommState& state, std::span<const std::byte> send,
                  std::span<std::byte> recv, Datatype type, ReduceOp op, int root) {
  detail::check_root(state, "reduce", root);
  detail::check_op(state, "reduce", type, op);
  detail::check_multiple(state, "reduce", "the send buffer", send.size(), datatype_size(type),
                         datatype_name(type));
  if (state.rank() == root) {
    detail::check_length(state, "reduce", "the receive buffer", recv.size(), send.size());
    detail::check_disjoint(state, "reduce", send, recv);
  }
}

std::shared_ptr<detail::Operation> make_reduce(const Comm& comm, std::span<const std::byte> send,
                                               std::span<std::byte> recv, Datatype type,
                                               ReduceOp op, int root) {
  detail::CommState& state = comm.state();
  check_reduce(state, send, recv, type, op, root);
  const bool at_root = state.rank() == root;
  const size_t count = send.size() / datatype_size(type);
  const detail::CallShape shape{.collective = detail::Collective::reduce,
                                .dtype = type,
                                .op = op,
                                .root = root,
                                .count = count};
  const auto& plan = detail::plan_call(state, shape, [&](detail::CallPlan& p) {
    const coll::AlgorithmSpec spec = coll::resolve_reduce(
        detail::forced_algorithm("reduce", reduce_algorithm.get()), state.size(), count, type);
    p.set_algorithm(spec);
    p.schedule = std::make_shared<const sched::Schedule>(
        coll::build_reduce({state.rank(), state.size(), root, count, type, op, false, spec}));
    p.describe = &describe_reduce;
  });
  return detail::make_operation(
      comm.state_ptr(), plan, detail::user_buffers(send, at_root ? recv : std::span<std::byte>{}));
}

}  // namespace

Request Comm::ireduce(std::span<const std::byte> send, std::span<std::byte> recv, Datatype type,
                      ReduceOp op, int root) {
  return detail::start_request(make_reduce(*this, send, recv, type, op, root));
}

void Comm::reduce(std::span<const std::byte> send, std::span<std::byte> recv, Datatype type,
                  ReduceOp op, int root) {
  check_reduce(state(), send, recv, type, op, root);
  if (reduce_algorithm.get() == "auto" &&
      shm::reduce(state().shm.get(), send, recv, type, op, root))
    return;
  ireduce(send, recv, type, op, root).wait();
}

Persistent Comm::reduce_init(std::span<const std::byte> send, std::span<std::byte> recv,
                             Datatype type, ReduceOp op, int root) {
  return Persistent(make_reduce(*this, send, recv, type, op, root));
}

}  // namespace grove
