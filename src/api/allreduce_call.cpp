// Comm::allreduce, iallreduce and allreduce_init (and their in-place forms):
// the front end of coll/allreduce.cpp.

#include <fmt/format.h>

#include "api/call.hpp"
#include "api/checks.hpp"
#include "api/hierarchy.hpp"
#include "coll/allreduce.hpp"
#include "coll/shm/collectives.hpp"

namespace grove {
namespace {

std::string describe_allreduce(const detail::CallPlan& plan, const sched::Buffers&) {
  return fmt::format("allreduce({} x {} {}{}, {})", plan.shape.count,
                     datatype_name(plan.shape.dtype), reduce_op_name(plan.shape.op),
                     plan.shape.in_place ? ", in place" : "", plan.algorithm);
}

class AllreduceCall final : public detail::Call {
 public:
  [[gnu::always_inline]] AllreduceCall(const Comm& comm, std::span<const std::byte> send,
                                       std::span<std::byte> recv, Datatype type, ReduceOp op,
                                       bool in_place)
      : Call(comm), send_(send), recv_(recv), type_(type), op_(op), in_place_(in_place) {
    detail::CommState& s = state();
    detail::check_op(s, "allreduce", type, op);
    if (!in_place) {
      detail::check_length(s, "allreduce", "the receive buffer", recv.size(), send.size());
      detail::check_disjoint(s, "allreduce", send, recv);
    }
    const size_t count = detail::check_elements(
        s, "allreduce", in_place ? "the in-place buffer" : "the send buffer", recv.size(), type);
    shape = {.collective = detail::Collective::allreduce,
             .in_place = in_place,
             .dtype = type,
             .op = op,
             .count = count};
    buffers = detail::user_buffers(in_place ? std::span<const std::byte>{} : send, recv);
    describe = &describe_allreduce;
    has_shm = !recv.empty();
    has_shm_single_copy = true;
    has_hier = !recv.empty();
    shm_slot_bytes = shm_message_bytes = recv.size();
  }
  coll::CallFacts facts() const override { return coll::facts(args({})); }
  sched::Schedule build(const coll::AlgorithmSpec& spec) const override {
    return coll::build_allreduce(args(spec));
  }
  bool run_shm(shm::Group& group, shm::Route route) const override {
    return shm::allreduce(group, route, in_place_ ? std::span<const std::byte>{} : send_, recv_,
                          type_, op_);
  }
  bool run_hier(detail::Hierarchy& h) const override {
    return detail::hier_allreduce(h, in_place_ ? std::span<const std::byte>{} : send_, recv_, type_,
                                  op_);
  }

 private:
  coll::AllreduceArgs args(const coll::AlgorithmSpec& spec) const {
    return {state().rank(), state().size(), shape.count, type_, op_, in_place_, spec};
  }
  std::span<const std::byte> send_;
  std::span<std::byte> recv_;
  Datatype type_;
  ReduceOp op_;
  bool in_place_;
};

}  // namespace

void Comm::allreduce(std::span<const std::byte> send, std::span<std::byte> recv, Datatype type,
                     ReduceOp op) {
  detail::run_blocking(AllreduceCall(*this, send, recv, type, op, false));
}

Request Comm::iallreduce(std::span<const std::byte> send, std::span<std::byte> recv, Datatype type,
                         ReduceOp op) {
  return detail::start(AllreduceCall(*this, send, recv, type, op, false));
}

Persistent Comm::allreduce_init(std::span<const std::byte> send, std::span<std::byte> recv,
                                Datatype type, ReduceOp op) {
  return detail::persistent(AllreduceCall(*this, send, recv, type, op, false));
}

void Comm::allreduce(std::span<std::byte> buffer, Datatype type, ReduceOp op) {
  detail::run_blocking(AllreduceCall(*this, {}, buffer, type, op, true));
}

Request Comm::iallreduce(std::span<std::byte> buffer, Datatype type, ReduceOp op) {
  return detail::start(AllreduceCall(*this, {}, buffer, type, op, true));
}

Persistent Comm::allreduce_init(std::span<std::byte> buffer, Datatype type, ReduceOp op) {
  return detail::persistent(AllreduceCall(*this, {}, buffer, type, op, true));
}

}  // namespace grove
