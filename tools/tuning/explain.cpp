#include "tuning/explain.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "api/comm_state.hpp"
#include "coll/allgather.hpp"
#include "coll/allgatherv.hpp"
#include "coll/allreduce.hpp"
#include "coll/alltoall.hpp"
#include "coll/alltoallv.hpp"
#include "coll/barrier.hpp"
#include "coll/bcast.hpp"
#include "coll/gather.hpp"
#include "coll/reduce.hpp"
#include "coll/reduce_scatter.hpp"
#include "coll/registry.hpp"
#include "coll/scatter.hpp"
#include "coll/shm/cma.hpp"
#include "coll/shm/group.hpp"
#include "core/params.hpp"
#include "grove/error.hpp"

namespace grove::tuning {
namespace {

constexpr size_t kFloat = 4;  // the suite's reductions are float32 sums

size_t elements(const ExplainCall& c) {
  if (c.bytes % kFloat != 0) {
    throw Error(Errc::usage,
                fmt::format("grove explain: {} of {} B: a float32 vector's size is a multiple of 4",
                            c.collective, c.bytes));
  }
  return c.bytes / kFloat;
}

// What the shared-memory engine's form of the call writes to a slot,
// compares with shm_max_bytes and shm_cma_min_bytes, and whether it has a
// single-copy path (api/*_call.cpp); nullopt: it has no form.
struct ShmNeed {
  uint64_t slot = 0;
  uint64_t message = 0;
  bool single_copy = false;
};
std::optional<ShmNeed> shm_need(const ExplainCall& c) {
  const uint64_t n = static_cast<uint64_t>(c.ranks);
  const std::string& k = c.collective;
  if (k == "barrier") return ShmNeed{0, 0};
  if (c.bytes == 0) return std::nullopt;
  if (k == "bcast" || k == "gather" || k == "allgather" || k == "reduce" || k == "allreduce")
    return ShmNeed{c.bytes, c.bytes, true};
  if (k == "scatter" || k == "alltoall") return ShmNeed{c.bytes * n, c.bytes, true};
  return std::nullopt;  // allgatherv, alltoallv, reduce_scatter
}

// The front ends' has_hier (api/*_call.cpp): the collectives with a
// hierarchical form, with a non-empty buffer.
bool has_hier_form(const ExplainCall& c) {
  const std::string& k = c.collective;
  if (k == "barrier") return true;
  return c.bytes > 0 && (k == "bcast" || k == "reduce" || k == "allreduce" || k == "allgather");
}

std::string describe_from(const coll::Choice& choice) {
  switch (choice.from) {
    case coll::ChoiceFrom::forced:
      return fmt::format("forced by the parameter {}", choice.reason);
    case coll::ChoiceFrom::tuning_file:
      return fmt::format("tuning file {}{}", choice.reason,
                         choice.note.empty() ? "" : ": " + choice.note);
    case coll::ChoiceFrom::built_in:
      return fmt::format("{}{}", choice.reason, choice.note.empty() ? "" : ": " + choice.note);
  }
  return choice.reason;
}

}  // namespace

coll::CallFacts call_facts(const ExplainCall& c) {
  const std::string& k = c.collective;
  const int n = c.ranks;
  if (n < 1) throw Error(Errc::usage, "grove explain: -n must be at least 1");
  const size_t b = static_cast<size_t>(c.bytes);
  if (k == "bcast") return coll::facts(coll::BcastArgs{0, n, 0, b, {}});
  if (k == "barrier") return coll::facts(coll::BarrierArgs{0, n, {}});
  if (k == "scatter") return coll::facts(coll::ScatterArgs{0, n, 0, b, {}});
  if (k == "gather") return coll::facts(coll::GatherArgs{0, n, 0, b, {}});
  if (k == "allgather") return coll::facts(coll::AllgatherArgs{0, n, b, false, {}});
  if (k == "allgatherv") {
    coll::AllgathervArgs a;
    a.size = n;
    a.counts.assign(static_cast<size_t>(n), b);
    return coll::facts(a);
  }
  if (k == "alltoall") return coll::facts(coll::AlltoallArgs{0, n, b, false, {}, 0});
  if (k == "alltoallv") {
    coll::AlltoallvArgs a;
    a.size = n;
    a.send_counts.assign(static_cast<size_t>(n), b);
    a.recv_counts.assign(static_cast<size_t>(n), b);
    return coll::facts(a);
  }
  if (k == "reduce") {
    return coll::facts(
        coll::ReduceArgs{0, n, 0, elements(c), Datatype::float32, ReduceOp::sum, false, {}});
  }
  if (k == "allreduce") {
    return coll::facts(
        coll::AllreduceArgs{0, n, elements(c), Datatype::float32, ReduceOp::sum, false, {}});
  }
  if (k == "reduce_scatter") {
    return coll::facts(
        coll::ReduceScatterArgs{0, n, elements(c), Datatype::float32, ReduceOp::sum, {}});
  }
  throw Error(Errc::usage, fmt::format("grove explain: unknown collective '{}'", k));
}

JobContext context_from_params(int ranks, int ranks_per_host) {
  JobContext out;
  const auto& registry = params::Registry::global();
  out.slot_bytes = static_cast<uint64_t>(registry.get("shm_slot_bytes").as_int);
  if (ranks_per_host > 0 && ranks_per_host < ranks) {
    out.hosts = (ranks + ranks_per_host - 1) / ranks_per_host;
    out.ranks_per_node = ranks_per_host;
    out.no_segment = "its ranks span hosts";
    out.hierarchy = ranks_per_host > 1;
    return out;
  }
  if (!registry.get("shm_collectives").as_bool) {
    out.no_segment = "shm_collectives is off";
  } else if (ranks < 2) {
    out.no_segment = "one rank has no segment";
  } else {
    out.segment = true;
    // Assumed: a job's members find out when its segment is made.
    out.single_copy = true;
  }
  return out;
}

JobContext context_of(const Comm& comm) {
  JobContext out;
  const detail::CommState& state = comm.state();
  out.segment = state.shm != nullptr;
  if (state.shm) {
    out.slot_bytes = state.shm->slot_bytes();
    out.single_copy = state.shm->single_copy();
  } else {
    out.no_segment = state.hosts > 1 ? "its ranks span hosts"
                                     : "shm_collectives is off, or it could not be made";
  }
  out.hosts = state.hosts;
  out.ranks_per_node = state.max_ranks_per_host;
  out.hierarchy = state.hierarchy != nullptr;
  return out;
}

std::string shm_refusal(const ExplainCall& call, const JobContext& job) {
  const std::optional<ShmNeed> need = shm_need(call);
  if (!need) return "the shared-memory engine has no form of this call (or it is empty)";
  if (!job.segment) {
    return "the communicator has no shared-memory segment (" +
           (job.no_segment.empty() ? std::string("its ranks span hosts") : job.no_segment) + ")";
  }
  const auto& registry = params::Registry::global();
  const auto max_bytes = static_cast<uint64_t>(registry.get("shm_max_bytes").as_int);
  // By name: call_facts would refuse a size the collective cannot take,
  // which is not this function's question.
  const coll::Collective collective =
      coll::collective_named(call.collective).value_or(coll::Collective::other);
  const uint64_t cma_from = shm::cma_min_bytes(collective);
  // Group::route: single copy from the collective's threshold, else the slots.
  if (need->single_copy && job.single_copy && cma_from > 0 && need->message >= cma_from) return {};
  if (need->slot > job.slot_bytes || need->message > max_bytes) {
    return fmt::format(
        "{} B to a slot and a {} B message exceed shm_slot_bytes {} or shm_max_bytes {}, and the "
        "single-copy path {}",
        need->slot, need->message, job.slot_bytes, max_bytes,
        !need->single_copy ? "has no form of this collective"
        : !job.single_copy
            ? "is off on this segment (CMA did not work at set-up)"
            : fmt::format("starts at {} {} (0: never)", shm::cma_param_name(collective), cma_from));
  }
  return {};
}

std::string hier_refusal(const ExplainCall& call, const JobContext& job) {
  if (!has_hier_form(call)) return "the collective has no hierarchical form";
  if (!job.hierarchy) {
    return "the communicator's ranks do not span several hosts with several ranks on one";
  }
  return {};
}

Explanation explain(const ExplainCall& call, const JobContext& job, const coll::PortModel* model,
                    const std::string& model_description) {
  Explanation e;
  e.call = call;
  e.model = model_description;
  e.facts = call_facts(call);
  e.facts.hosts = job.hosts;
  e.facts.ranks_per_node = job.ranks_per_node;
  auto cannot_run = [&](const coll::AlgorithmSpec& spec) -> std::string {
    if (spec.name == "shm") return shm_refusal(call, job);
    if (spec.name == "hier") return hier_refusal(call, job);
    return {};
  };
  e.choice = coll::choose(e.facts, call.blocking, cannot_run);

  std::vector<Candidate> ranked;
  if (model != nullptr) ranked = rank_candidates(call.collective, call.ranks, call.bytes, *model);
  auto rank_of = [&](const coll::AlgorithmSpec& spec) {
    for (size_t i = 0; i < ranked.size(); ++i)
      if (ranked[i].spec == spec) return static_cast<int>(i + 1);
    return 0;
  };
  auto add = [&](const coll::AlgorithmSpec& spec) {
    for (const ExplainRow& r : e.rows)
      if (r.spec == spec) return;
    ExplainRow row;
    row.spec = spec;
    const coll::AlgorithmInfo& info = coll::algorithm_info(call.collective, spec.name);
    row.has_form = static_cast<bool>(info.cost.cost);
    row.modelled = model != nullptr && row.has_form;
    if (row.modelled) {
      row.predicted_us = predict(spec, call.ranks, call.bytes, *model);
      // shm without the host terms: a form, but nothing to price it with.
      row.modelled = !std::isnan(row.predicted_us);
      row.model_rank = row.modelled ? rank_of(spec) : 0;
    }
    if (info.cannot_run) row.cannot_run = info.cannot_run(call.ranks);
    if (row.cannot_run.empty() && !info.schedule && !call.blocking)
      row.cannot_run = "blocking calls only";
    if (row.cannot_run.empty()) row.cannot_run = cannot_run(spec);
    row.chosen = spec == e.choice.spec;
    e.rows.push_back(row);
  };
  for (const coll::AlgorithmInfo& info : coll::algorithms_of(call.collective)) {
    // The model's best variant of this algorithm, then its default one.
    for (const Candidate& c : ranked) {
      if (c.spec.name == info.name) {
        add(c.spec);
        break;
      }
    }
    const std::string example = info.example.empty() ? info.name : info.example;
    add(coll::resolve(e.facts, coll::parse_algorithm(call.collective, example)));
  }
  add(e.choice.spec);
  return e;
}

std::string Explanation::text() const {
  std::string out = fmt::format(
      "{} on {} ranks, {} B ({} call); facts: bytes {}, total {}, count {}, hosts {}\n",
      call.collective, call.ranks, call.bytes, call.blocking ? "blocking" : "non-blocking",
      facts.bytes, facts.total, facts.count, facts.hosts);
  out += model.empty() ? "model: none (give --plogp FILE, or a tuning file that names one)\n"
                       : fmt::format("model: {}\n", model);
  const bool measured =
      std::any_of(rows.begin(), rows.end(), [](const ExplainRow& r) { return r.measured_us >= 0; });
  out += fmt::format("  {:<28} {:>14} {:>6}{}  {}\n", "algorithm", "predicted", "rank",
                     measured ? fmt::format(" {:>14}", "measured") : "", "");
  for (const ExplainRow& r : rows) {
    const std::string predicted = r.modelled   ? fmt::format("{:.3f} us", r.predicted_us)
                                  : r.has_form ? std::string("-")
                                               : std::string("not modelled");
    const std::string rank = r.model_rank > 0 ? fmt::format("#{}", r.model_rank) : "";
    std::string m;
    if (measured)
      m = r.measured_us >= 0 ? fmt::format(" {:>11.3f} us", r.measured_us)
                             : fmt::format(" {:>14}", "-");
    std::string tail = r.chosen ? "<- the choice" : "";
    if (!r.cannot_run.empty()) tail += (tail.empty() ? "" : "; ") + ("cannot run: " + r.cannot_run);
    out +=
        fmt::format("  {:<28} {:>14} {:>6}{}  {}\n", r.spec.to_string(), predicted, rank, m, tail);
  }
  out += fmt::format("choice: {}\n  why: {}\n", choice.spec.to_string(), describe_from(choice));
  for (const std::string& p : choice.passed_over)
    out += fmt::format("  passed over: {}\n", p);
  const ExplainRow* chosen = nullptr;
  const ExplainRow* best = nullptr;
  for (const ExplainRow& r : rows) {
    if (r.chosen) chosen = &r;
    if (r.model_rank == 1) best = &r;
  }
  if (best != nullptr && chosen != nullptr && chosen->modelled && chosen != best &&
      best->predicted_us > 0) {
    out += fmt::format("  the model's fastest: {} ({:.3f} us); the choice is predicted {:+.1f}%\n",
                       best->spec.to_string(), best->predicted_us,
                       100 * (chosen->predicted_us / best->predicted_us - 1));
  } else if (best != nullptr && best == chosen) {
    out += "  the choice is the model's fastest\n";
  }
  return out;
}

}  // namespace grove::tuning
