#include "api/call.hpp"

#include <fmt/format.h>

#include "coll/registry.hpp"
#include "coll/shm/cma.hpp"
#include "coll/shm/collectives.hpp"
#include "coll/shm/group.hpp"
#include "core/params.hpp"
#include "core/recycler.hpp"

namespace grove::detail {
namespace {

// Why the shared-memory engine cannot run `call` (empty: it can).
std::string shm_refusal(const Call& call) {
  const shm::Group* group = call.state().shm.get();
  if (!call.has_shm) return "the shared-memory engine has no form of this call (or it is empty)";
  if (group == nullptr) {
    return "the communicator has no shared-memory segment (its ranks span hosts, "
           "shm_collectives is off, or the segment could not be made)";
  }
  const coll::Collective collective = call.facts().collective;
  if (!group->fits(collective, call.shm_slot_bytes, call.shm_message_bytes,
                   call.has_shm_single_copy)) {
    return fmt::format(
        "{} B to a slot and a {} B message exceed shm_slot_bytes {} or "
        "shm_max_bytes, and the single-copy path {}",
        call.shm_slot_bytes, call.shm_message_bytes, group->slot_bytes(),
        !call.has_shm_single_copy ? "has no form of this collective"
        : !group->single_copy()
            ? "is off on this segment (CMA did not work at set-up)"
            : fmt::format("starts at {} (0: never)", shm::cma_param_name(collective)));
  }
  return {};
}

// Why the hierarchical algorithm cannot run `call` (empty: it can).
std::string hier_refusal(const Call& call) {
  if (!call.has_hier) return "the collective has no hierarchical form";
  if (!call.state().hierarchy) {
    return "the communicator's ranks do not span several hosts with several ranks on one";
  }
  return {};
}

void resolve(const Call& call, CallPlan& plan) {
  const auto cannot_run = [&call](const coll::AlgorithmSpec& spec) -> std::string {
    if (spec.name == "shm") return shm_refusal(call);
    if (spec.name == "hier") return hier_refusal(call);
    return {};
  };
  coll::CallFacts facts = call.facts();
  facts.hosts = call.state().hosts;
  facts.ranks_per_node = call.state().max_ranks_per_host;
  const std::string forced =
      call.state().hierarchy_part ? "auto" : coll::forced_algorithm_text(facts.collective);
  try {
    const std::string name = coll::choose(facts, forced, true, cannot_run).spec.name;
    plan.blocking = name == "shm"    ? CallPlan::Blocking::shm
                    : name == "hier" ? CallPlan::Blocking::hier
                                     : CallPlan::Blocking::schedule;
    // Selection chose shm only where shm_refusal found none: the route is
    // slots or single copy.
    if (plan.blocking == CallPlan::Blocking::shm) {
      plan.shm_route = call.state().shm->route(facts.collective, call.shm_slot_bytes,
                                               call.shm_message_bytes, call.has_shm_single_copy);
    }
  } catch (const Error& e) {
    plan.blocking_error = e.what();
  }
  try {
    const coll::AlgorithmSpec spec = coll::choose(facts, forced, false, cannot_run).spec;
    plan.algorithm = call.algorithm_text(spec);
    coll::AlgorithmSpec unposted = spec;
    unposted.posts = 0;
    coll::AlgorithmSpec stamped;  // hashes (collective, text): AlgorithmSpec::stamp
    stamped.collective = spec.collective;
    stamped.name = call.algorithm_text(unposted);
    plan.stamp = stamped.stamp();
    plan.schedule = std::make_shared<const sched::Schedule>(call.build(spec));
  } catch (const Error& e) {
    if (e.code() != Errc::invalid_argument) throw;
    plan.schedule_error = e.what();
  }
  plan.describe = call.describe;
}

[[noreturn]] void refuse(const CommState& comm, const std::string& error) {
  throw Error(Errc::invalid_argument, fmt::format("rank {}: {}", comm.rank(), error));
}

}  // namespace

const std::shared_ptr<const CallPlan>& plan_of(const Call& call) {
  return plan_call(call.state(), call.shape, [&call](CallPlan& plan) { resolve(call, plan); });
}

void run_blocking_planned(const Call& call, const PlanCache::Front* front) {
  const std::shared_ptr<const CallPlan>& plan = front != nullptr ? *front->plan : plan_of(call);
  if (!plan->blocking_error.empty()) refuse(call.state(), plan->blocking_error);
  if (plan->blocking == CallPlan::Blocking::shm && call.run_shm(*call.state().shm, plan->shm_route))
    return;
  if (plan->blocking == CallPlan::Blocking::hier && call.run_hier(*call.state().hierarchy)) return;
  if (!plan->schedule_error.empty()) refuse(call.state(), plan->schedule_error);
  Operation operation(call.state_ptr(), plan, call.buffers);
  operation.start();
  operation.wait();
}

Request start(const Call& call) {
  auto operation = make_operation(call.state_ptr(), plan_of(call), call.buffers);
  operation->start();
  return Request(std::move(operation));
}

Persistent persistent(const Call& call) {
  return Persistent(make_operation(call.state_ptr(), plan_of(call), call.buffers));
}

const std::shared_ptr<const CallPlan>& plan_call(CommState& comm, const CallShape& shape,
                                                 FunctionRef<void(CallPlan&)> resolve) {
  // Read before resolving: a parameter changed meanwhile makes the next call
  // resolve again.
  const uint64_t generation = params::generation();
  const std::shared_ptr<const CallPlan>* cached = comm.cache.find(shape);
  if (cached != nullptr && (*cached)->params_generation == generation) return *cached;
  auto plan = std::make_shared<CallPlan>();
  plan->shape = shape;
  for (size_t i = 0; i < shape.lists.size(); ++i) {
    plan->list_storage[i].assign(shape.lists[i].begin(), shape.lists[i].end());
    plan->shape.lists[i] = plan->list_storage[i];
  }
  plan->params_generation = generation;
  resolve(*plan);
  return comm.cache.insert(std::move(plan));
}

std::shared_ptr<Operation> make_operation(const std::shared_ptr<CommState>& comm,
                                          std::shared_ptr<const CallPlan> plan,
                                          const sched::Buffers& buffers) {
  if (!plan->schedule_error.empty()) refuse(*comm, plan->schedule_error);
  return std::allocate_shared<Operation>(RecyclingAllocator<Operation>{}, comm, std::move(plan),
                                         buffers);
}

}  // namespace grove::detail
