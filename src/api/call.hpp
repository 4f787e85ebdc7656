#pragma once
// One collective call, from the front end down. Each collective's front end
// (api/<collective>_call.cpp) is one class derived from Call: its
// constructor checks the arguments and fills in the call's shape, its
// selection facts and its buffers; it says how to build the schedule of a
// chosen algorithm and how to run the call on shared memory. Then the three
// forms are one line each:
//
//   blocking       run_blocking(call): the plan's blocking choice, on
//                  shared memory (`shm`) or a schedule, waited for
//   non-blocking   start(call): the plan's schedule, started, as a Request
//   persistent     persistent(call): the plan's schedule, bound, not started
//
// The plan (api/call_plan.hpp) is resolved once per shape and parameter
// generation: selection (coll/select.hpp) for a blocking and for a
// non-blocking call, the shared-memory route, the schedule, the stamp. A
// repeated call of one shape costs a few compares (a hash lookup when it is
// not among the most recent shapes), one Operation in recycled memory and
// one pooled execution state (or, on shared memory, none of these);
// nothing is parsed, formatted or allocated. A repeated blocking call on
// shared memory compares its shape with the cache's front entry
// (PlanCache::hot) and runs: that much is inline here.

#include <memory>
#include <span>
#include <string>

#include "api/call_plan.hpp"
#include "api/comm_state.hpp"
#include "api/operation.hpp"
#include "coll/select.hpp"
#include "core/params.hpp"
#include "grove/comm.hpp"
#include "grove/request.hpp"

namespace grove::shm {
class Group;
}

namespace grove::detail {

// A front end's constructor is [[gnu::always_inline]]: with run_blocking
// inline too, the shape's constant fields reach the plan cache's compare
// as constants and the call's own fields stay in registers.
class Call {
 public:
  // `comm` outlives the call (a Call is a temporary of one Comm member
  // function): the Call refers to its state rather than sharing it, so a
  // call on shared memory, which makes no Operation, touches no reference
  // count.
  explicit Call(const Comm& comm) : comm_(comm.state_ptr()) {}
  virtual ~Call() = default;

  CommState& state() const { return *comm_; }
  const std::shared_ptr<CommState>& state_ptr() const { return comm_; }

  // What selection looks at (asked only when the plan is resolved).
  virtual coll::CallFacts facts() const = 0;
  // This rank's schedule of `spec` (resolved by selection).
  virtual sched::Schedule build(const coll::AlgorithmSpec& spec) const = 0;
  // Runs the call on the communicator's shared-memory segment by `route`
  // (the plan's, decided by Group::route of shm_slot_bytes,
  // shm_message_bytes and has_shm_single_copy); false (with nothing
  // touched) when it does not run there after all.
  virtual bool run_shm(shm::Group& /*group*/, shm::Route /*route*/) const { return false; }
  // Runs the call by the hierarchical algorithm (api/hierarchy.hpp); false
  // when the collective has no such form.
  virtual bool run_hier(Hierarchy& /*hierarchy*/) const { return false; }
  // The algorithm as errors name it and the wire stamp hashes it (without
  // posts=, which bounds only this rank's messages): the spec's canonical
  // form, plus any parameter the algorithm reads that the spec does not
  // carry ("gather_bcast(rollup=64,release=4)").
  virtual std::string algorithm_text(const coll::AlgorithmSpec& spec) const {
    return spec.to_string();
  }

  CallShape shape;
  sched::Buffers buffers;
  // The call's name in errors (see CallPlan::describe).
  std::string (*describe)(const CallPlan& plan, const sched::Buffers& buffers) = nullptr;
  // The shared-memory form: whether there is one, whether it has a
  // single-copy path (docs/shm.md), what a rank writes to its slot, and the
  // message size shm_max_bytes and shm_cma_min_bytes are compared with.
  bool has_shm = false;
  bool has_shm_single_copy = false;
  bool has_hier = false;  // the collective has a hierarchical form
  size_t shm_slot_bytes = 0;
  size_t shm_message_bytes = 0;

 private:
  const std::shared_ptr<CommState>& comm_;
};

// The plan of `call`'s shape (cached; see plan_call).
const std::shared_ptr<const CallPlan>& plan_of(const Call& call);

// run_blocking after the front entry's check: `front` is the cache's front
// entry when it is the call's plan (PlanCache::hot), else null.
void run_blocking_planned(const Call& call, const PlanCache::Front* front);

// Inline so that a front end's call (a temporary of a final class) is
// dispatched directly: a repeated blocking call on shared memory costs the
// front entry's compare and the run.
inline void run_blocking(const Call& call) {
  CommState& comm = call.state();
  const PlanCache::Front* front = comm.cache.hot(call.shape, params::generation());
  if (front != nullptr && front->blocking == CallPlan::Blocking::shm &&
      call.run_shm(*comm.shm, front->shm_route)) {
    return;
  }
  run_blocking_planned(call, front);
}

Request start(const Call& call);
Persistent persistent(const Call& call);

// The plan for `shape` on `comm`: the cached one if it was resolved under the
// current parameters (params::generation), else a new one that `resolve`
// fills in (the shape, its lists and the generation are set here) and the
// cache keeps. `resolve` must depend only on the shape, the communicator and
// parameters. The reference is valid until the next plan_call on `comm`.
const std::shared_ptr<const CallPlan>& plan_call(CommState& comm, const CallShape& shape,
                                                 FunctionRef<void(CallPlan&)> resolve);

// A new Operation running `plan`'s schedule on `buffers` (recycled memory);
// throws the plan's schedule error when no schedule can run the call.
std::shared_ptr<Operation> make_operation(const std::shared_ptr<CommState>& comm,
                                          std::shared_ptr<const CallPlan> plan,
                                          const sched::Buffers& buffers);

// The executor's view of a call's user buffers; an empty span stands for a
// buffer the call does not use on this rank (in place, or not the root).
inline sched::Buffers user_buffers(std::span<const std::byte> input, std::span<std::byte> output) {
  return {input.data(), input.size(), output.data(), output.size()};
}

}  // namespace grove::detail
