// Comm::barrier, ibarrier and barrier_init: the front end of coll/barrier.cpp.

#include <fmt/format.h>

#include "api/call.hpp"
#include "api/checks.hpp"
#include "api/hierarchy.hpp"
#include "coll/barrier.hpp"
#include "coll/shm/collectives.hpp"

namespace grove {
namespace {

std::string describe_barrier(const detail::CallPlan& plan, const sched::Buffers&) {
  return fmt::format("barrier({})", plan.algorithm);
}

class BarrierCall final : public detail::Call {
 public:
  [[gnu::always_inline]] explicit BarrierCall(const Comm& comm) : Call(comm) {
    shape = {.collective = detail::Collective::barrier};
    describe = &describe_barrier;
    has_shm = true;  // no bytes: fits every segment
    has_hier = true;
  }
  coll::CallFacts facts() const override { return coll::facts(args({})); }
  sched::Schedule build(const coll::AlgorithmSpec& spec) const override {
    return coll::build_barrier(args(spec));
  }
  bool run_shm(shm::Group& group, shm::Route) const override {
    shm::barrier(group);
    return true;
  }
  bool run_hier(detail::Hierarchy& h) const override { return detail::hier_barrier(h); }

 private:
  coll::BarrierArgs args(const coll::AlgorithmSpec& spec) const {
    return {state().rank(), state().size(), spec};
  }
};

}  // namespace

void Comm::barrier() {
  detail::run_blocking(BarrierCall(*this));
}

Request Comm::ibarrier() {
  return detail::start(BarrierCall(*this));
}

Persistent Comm::barrier_init() {
  return detail::persistent(BarrierCall(*this));
}

}  // namespace grove
