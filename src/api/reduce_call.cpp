// Comm::reduce, ireduce and reduce_init: the front end of coll/reduce.cpp.

#include <fmt/format.h>

#include "api/call.hpp"
#include "api/checks.hpp"
#include "api/hierarchy.hpp"
#include "coll/reduce.hpp"
#include "coll/shm/collectives.hpp"

namespace grove {
namespace {

std::string describe_reduce(const detail::CallPlan& plan, const sched::Buffers&) {
  return fmt::format("reduce(root {}, {} x {} {}, {})", plan.shape.root, plan.shape.count,
                     datatype_name(plan.shape.dtype), reduce_op_name(plan.shape.op),
                     plan.algorithm);
}

class ReduceCall final : public detail::Call {
 public:
  [[gnu::always_inline]] ReduceCall(const Comm& comm, std::span<const std::byte> send,
                                    std::span<std::byte> recv, Datatype type, ReduceOp op, int root)
      : Call(comm), send_(send), recv_(recv), type_(type), op_(op), root_(root) {
    detail::CommState& s = state();
    detail::check_root(s, "reduce", root);
    detail::check_op(s, "reduce", type, op);
    const size_t count = detail::check_elements(s, "reduce", "the send buffer", send.size(), type);
    const bool at_root = s.rank() == root;
    if (at_root) {
      detail::check_length(s, "reduce", "the receive buffer", recv.size(), send.size());
      detail::check_disjoint(s, "reduce", send, recv);
    }
    shape = {.collective = detail::Collective::reduce,
             .dtype = type,
             .op = op,
             .root = root,
             .count = count};
    buffers = detail::user_buffers(send, at_root ? recv : std::span<std::byte>{});
    describe = &describe_reduce;
    has_shm = !send.empty();
    has_shm_single_copy = true;
    has_hier = !send.empty();
    shm_slot_bytes = shm_message_bytes = send.size();
  }
  coll::CallFacts facts() const override { return coll::facts(args({})); }
  sched::Schedule build(const coll::AlgorithmSpec& spec) const override {
    return coll::build_reduce(args(spec));
  }
  bool run_shm(shm::Group& group, shm::Route route) const override {
    return shm::reduce(group, route, send_, recv_, type_, op_, root_);
  }
  bool run_hier(detail::Hierarchy& h) const override {
    return detail::hier_reduce(h, send_, recv_, type_, op_, root_);
  }

 private:
  coll::ReduceArgs args(const coll::AlgorithmSpec& spec) const {
    return {state().rank(), state().size(), root_, shape.count, type_, op_, false, spec};
  }
  std::span<const std::byte> send_;
  std::span<std::byte> recv_;
  Datatype type_;
  ReduceOp op_;
  int root_;
};

}  // namespace

void Comm::reduce(std::span<const std::byte> send, std::span<std::byte> recv, Datatype type,
                  ReduceOp op, int root) {
  detail::run_blocking(ReduceCall(*this, send, recv, type, op, root));
}

Request Comm::ireduce(std::span<const std::byte> send, std::span<std::byte> recv, Datatype type,
                      ReduceOp op, int root) {
  return detail::start(ReduceCall(*this, send, recv, type, op, root));
}

Persistent Comm::reduce_init(std::span<const std::byte> send, std::span<std::byte> recv,
                             Datatype type, ReduceOp op, int root) {
  return detail::persistent(ReduceCall(*this, send, recv, type, op, root));
}

}  // namespace grove
