// Comm::reduce_scatter, ireduce_scatter and reduce_scatter_init: the front
// end of coll/reduce_scatter.cpp.

#include <fmt/format.h>

#include "api/call.hpp"
#include "api/checks.hpp"
#include "coll/reduce_scatter.hpp"

namespace grove {
namespace {

std::string describe_reduce_scatter(const detail::CallPlan& plan, const sched::Buffers&) {
  return fmt::format("reduce_scatter({} x {} {} per rank, {})", plan.shape.count,
                     datatype_name(plan.shape.dtype), reduce_op_name(plan.shape.op),
                     plan.algorithm);
}

class ReduceScatterCall final : public detail::Call {
 public:
  ReduceScatterCall(const Comm& comm, std::span<const std::byte> send, std::span<std::byte> recv,
                    Datatype type, ReduceOp op)
      : Call(comm), type_(type), op_(op) {
    detail::CommState& s = state();
    detail::check_op(s, "reduce_scatter", type, op);
    detail::check_length(s, "reduce_scatter", "the send buffer", send.size(),
                         recv.size() * static_cast<size_t>(s.size()));
    const size_t count =
        detail::check_elements(s, "reduce_scatter", "the receive buffer", recv.size(), type);
    detail::check_disjoint(s, "reduce_scatter", send, recv);
    shape = {
        .collective = detail::Collective::reduce_scatter, .dtype = type, .op = op, .count = count};
    buffers = detail::user_buffers(send, recv);
    describe = &describe_reduce_scatter;
  }
  coll::CallFacts facts() const override { return coll::facts(args({})); }
  sched::Schedule build(const coll::AlgorithmSpec& spec) const override {
    return coll::build_reduce_scatter(args(spec));
  }

 private:
  coll::ReduceScatterArgs args(const coll::AlgorithmSpec& spec) const {
    return {state().rank(), state().size(), shape.count, type_, op_, spec};
  }
  Datatype type_;
  ReduceOp op_;
};

}  // namespace

void Comm::reduce_scatter(std::span<const std::byte> send, std::span<std::byte> recv, Datatype type,
                          ReduceOp op) {
  detail::run_blocking(ReduceScatterCall(*this, send, recv, type, op));
}

Request Comm::ireduce_scatter(std::span<const std::byte> send, std::span<std::byte> recv,
                              Datatype type, ReduceOp op) {
  return detail::start(ReduceScatterCall(*this, send, recv, type, op));
}

Persistent Comm::reduce_scatter_init(std::span<const std::byte> send, std::span<std::byte> recv,
                                     Datatype type, ReduceOp op) {
  return detail::persistent(ReduceScatterCall(*this, send, recv, type, op));
}

}  // namespace grove
