#include "model/sim_estimate.hpp"

#include <unistd.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "core/params.hpp"
#include "grove/error.hpp"
#include "model/sim_run.hpp"
#include "model/sim_schedules.hpp"
#include "sched/executor.hpp"
#include "sched/ready_steps.hpp"
#include "sched/step_graph.hpp"
#include "transport/sim/sim_world.hpp"

namespace grove::model {
namespace {

const params::StringParam sim_max_memory_param{
    "sim_max_memory", "auto",
    "simulator: refuse a run whose estimated peak memory is larger (bytes, e.g. 8GiB; 'auto': "
    "half the machine's physical memory; 0: no limit)",
    [](std::string_view value) -> std::string {
      if (value == "auto") return {};
      try {
        params::parse_bytes(value, "sim_max_memory");
        return {};
      } catch (const Error& e) {
        return e.what();
      }
    }};

// One rank's schedule, dry-run: everything that can be posted is posted
// before the oldest message in flight completes (messages complete in
// posting order). Its peaks bound what the rank can have in flight at once.
struct Profile {
  size_t steps = 0, deps = 0, sends = 0, recvs = 0;
  double send_bytes = 0;
  size_t intra_node_sends = 0;
  size_t peak_sends = 0, peak_recvs = 0, peak_window = 0;
  size_t ready_storage = 0;  // ids the executor's ready-step arrays grow to (ready_steps.hpp)
  size_t streams = 0;        // peers it receives from, at most peak_recvs at once
  // Sends and receives of empty marked blocks: no message. Relabelled for
  // another rank they are other blocks, so a shared schedule with any
  // counts its ranks' messages only roughly.
  size_t empty_messages = 0;
  size_t schedule_bytes = 0;  // the schedule and its StepGraph
};

Profile profile(const sched::Schedule& s, int rank, const sim::SimConfig& config) {
  Profile p;
  const sched::StepGraph graph(s);
  const size_t n = s.steps.size();
  p.steps = n;
  p.deps = s.deps.size();
  const int node = rank / config.ranks_per_node;
  std::set<int> streams;
  for (const sched::Step& step : s.steps) {
    const sched::Region& region = step.kind == sched::Kind::send ? step.src : step.dst;
    if ((step.kind == sched::Kind::send || step.kind == sched::Kind::recv) && region.length == 0 &&
        region.mark != sched::Mark::none) {
      ++p.empty_messages;  // completed without a message (executor.hpp)
      continue;
    }
    if (step.kind == sched::Kind::send) {
      ++p.sends;
      p.send_bytes += static_cast<double>(step.src.length);
      if (step.peer / config.ranks_per_node == node) ++p.intra_node_sends;
    } else if (step.kind == sched::Kind::recv) {
      ++p.recvs;
      streams.insert(step.peer);
    }
  }
  p.schedule_bytes =
      sizeof(sched::Schedule) + n * sizeof(sched::Step) + p.deps * sizeof(sched::StepId) +
      (s.symmetry.offsets.size() + s.symmetry.output_offsets.size()) * 2 * sizeof(size_t) +
      sizeof(sched::StepGraph) + (3 * n + 1 + p.deps) * sizeof(uint32_t) +
      n;  // StepGraph, with its byte cells

  // The executor's own queues, so their storage is what an execution's is:
  // one queue for all when the schedule has no in-flight limits.
  sched::ReadySteps local, sends, recvs;
  sched::ReadySpill local_spill, send_spill, recv_spill;
  const bool unlimited = s.max_sends == sched::kUnlimited && s.max_recvs == sched::kUnlimited;
  std::vector<uint32_t> remaining = graph.initial;
  std::vector<bool> done(n, false);
  std::deque<sched::StepId> flight;
  size_t in_sends = 0, in_recvs = 0, low = 0, high = 0;
  auto make_ready = [&](sched::StepId id) {
    switch (unlimited ? sched::Kind::copy : s.steps[id].kind) {
      case sched::Kind::send:
        sends.push(id, send_spill);
        break;
      case sched::Kind::recv:
        recvs.push(id, recv_spill);
        break;
      default:
        local.push(id, local_spill);
        break;
    }
  };
  auto complete = [&](sched::StepId id) {
    done[id] = true;
    while (low < n && done[low])
      ++low;
    for (uint32_t i = graph.dependents_begin[id]; i < graph.dependents_begin[id + 1]; ++i) {
      const sched::StepId next = graph.dependents[i];
      high = std::max<size_t>(high, next + 1);
      if (--remaining[next] == 0) make_ready(next);
    }
  };
  for (const sched::StepId id : graph.roots) {
    high = std::max<size_t>(high, id + 1);
    make_ready(id);
  }
  for (;;) {
    p.peak_window = std::max(p.peak_window, high > low ? high - low : 0);
    sched::ReadySteps* from = nullptr;
    auto consider = [&](sched::ReadySteps& h, bool allowed) {
      if (allowed && !h.empty() && (from == nullptr || h.top() < from->top())) from = &h;
    };
    consider(local, true);
    consider(sends, in_sends < s.max_sends);
    consider(recvs, in_recvs < s.max_recvs);
    if (from != nullptr) {
      const sched::StepId id = from->top();
      from->pop();
      const sched::Kind kind = s.steps[id].kind;
      if (kind != sched::Kind::send && kind != sched::Kind::recv) {
        complete(id);
        continue;
      }
      flight.push_back(id);
      if (kind == sched::Kind::send) {
        p.peak_sends = std::max(p.peak_sends, ++in_sends);
      } else {
        p.peak_recvs = std::max(p.peak_recvs, ++in_recvs);
      }
      continue;
    }
    if (flight.empty()) break;
    const sched::StepId id = flight.front();
    flight.pop_front();
    --(s.steps[id].kind == sched::Kind::send ? in_sends : in_recvs);
    complete(id);
  }
  p.ready_storage = local_spill.capacity + send_spill.capacity + recv_spill.capacity;
  p.streams = std::min(streams.size(), p.peak_recvs);
  return p;
}

// Ranks whose schedules stand for the others when they are not shared:
// rank 0 and the last (roots and edges, often unlike the rest) stand for
// themselves; pseudo-random others (not evenly spaced: in a binomial tree
// ranks at round multiples have more children) for everyone else.
struct Sample {
  std::vector<int> own;     // each stands for itself
  std::vector<int> others;  // together they stand for the remaining ranks
};

Sample sample_ranks(int size) {
  Sample s;
  s.own.push_back(0);
  if (size > 1) s.own.push_back(size - 1);
  if (size <= 2) return s;
  constexpr int kOthers = 24;
  std::set<int> picked;
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < 4 * kOthers && static_cast<int>(picked.size()) < std::min(kOthers, size - 2);
       ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    picked.insert(1 + static_cast<int>(x % static_cast<uint64_t>(size - 2)));
  }
  s.others.assign(picked.begin(), picked.end());
  return s;
}

std::string gigabytes(double bytes) {
  return fmt::format("{:.2f} GB", bytes / 1e9);
}

}  // namespace

std::string SimEstimate::summary() const {
  return fmt::format(
      "about {:.2g} messages, {:.2g} events, {} at the peak (schedules {}, executions {}, "
      "ranks {}, in flight {}, buffers {}){}",
      messages, events, gigabytes(memory), gigabytes(schedule_memory), gigabytes(execution_memory),
      gigabytes(world_memory), gigabytes(flight_memory), gigabytes(buffer_memory),
      sampled ? ", from a sample of ranks" : "");
}

SimEstimate estimate_sim(const SimJob& job, const sim::SimConfig& config, SimSchedules& schedules) {
  SimEstimate e;
  e.ranks = job.size;
  const double n = job.size;
  // Every distinct schedule of the sampled ranks, profiled once, with the
  // number of ranks it stands for (shared ones: every rank they cover).
  struct Seen {
    std::shared_ptr<const sched::Schedule> schedule;  // held: its address is the key
    Profile profile;
    double weight = 0;
    bool shared = false;
  };
  std::vector<Seen> seen;
  const Sample sample = sample_ranks(job.size);
  const double per_other = sample.others.empty() ? 0
                                                 : (n - static_cast<double>(sample.own.size())) /
                                                       static_cast<double>(sample.others.size());
  double buffers = 0;
  auto visit = [&](int rank, double weight) {
    const auto s = schedules.of(rank);
    if (config.data == sim::DataMode::real) {
      buffers += weight * static_cast<double>((job.input_bytes ? job.input_bytes(rank) : 0) +
                                              (job.output_bytes ? job.output_bytes(rank) : 0) +
                                              s->scratch_bytes);
    }
    auto it =
        std::find_if(seen.begin(), seen.end(), [&](const Seen& x) { return x.schedule == s; });
    if (it != seen.end()) {
      if (!it->shared) it->weight += weight;
      return;
    }
    const size_t stands_for = schedules.ranks_of(*s);
    const bool shared = stands_for > 1;
    seen.push_back({s, profile(*s, shared ? s->symmetry.built_for : rank, config),
                    shared ? static_cast<double>(stands_for) : weight, shared});
  };
  for (const int rank : sample.own)
    visit(rank, 1);
  for (const int rank : sample.others)
    visit(rank, per_other);
  // Every shared schedule, with the ranks it stands for, also those the
  // sample missed (one per shape: some shapes are a few ranks).
  for (const int rank : schedules.representatives())
    visit(rank, 0);
  // Shared schedules covering every rank give exact counts; otherwise the
  // sample stands for the ranks it did not see.
  double covered = 0;
  for (const Seen& x : seen)
    if (x.shared) covered += x.weight;
  e.sampled = covered < n || std::any_of(seen.begin(), seen.end(), [](const Seen& x) {
                return x.shared && x.profile.empty_messages > 0;
              });
  if (e.sampled) {
    // Mixed: scale the per-rank weights so that all weights add up to n.
    double total = 0;
    for (const Seen& x : seen)
      total += x.weight;
    for (Seen& x : seen)
      x.weight *= n / total;
  }
  const double per_message_events =
      config.recv_us > 0 || config.model == sim::CostModel::plogp ? 5.0 : 4.0;
  for (const Seen& x : seen) {
    const Profile& p = x.profile;
    const double w = x.weight;
    e.steps += w * static_cast<double>(p.steps);
    e.messages += w * static_cast<double>(p.sends);
    e.bytes += w * p.send_bytes;
    e.events += w * (static_cast<double>(p.sends) * per_message_events -
                     static_cast<double>(p.intra_node_sends));
    e.schedule_memory += (x.shared ? 1 : w) * static_cast<double>(p.schedule_bytes);
    e.execution_memory += w * static_cast<double>(sched::Execution::footprint(
                                  p.steps, p.peak_window, p.ready_storage));
    const double mean_bytes = p.sends > 0 ? p.send_bytes / static_cast<double>(p.sends) : 0;
    e.flight_memory += w * (static_cast<double>(p.peak_sends) *
                                static_cast<double>(sim::SimWorld::message_footprint(
                                    config, static_cast<uint64_t>(mean_bytes))) +
                            static_cast<double>(p.peak_recvs * sim::SimWorld::receive_footprint() +
                                                p.streams * sim::SimWorld::stream_footprint()));
  }
  // sim_run's own per-rank vectors: the execution pointer, the completion
  // time, the end notice's context.
  e.world_memory = n * static_cast<double>(sim::SimWorld::rank_footprint(config) + 32);
  if (config.data == sim::DataMode::real) {
    const double seen_ranks = static_cast<double>(sample.own.size()) +
                              static_cast<double>(sample.others.size()) * per_other;
    e.buffer_memory = seen_ranks > 0 ? buffers * n / seen_ranks : 0;
  }
  e.memory =
      e.schedule_memory + e.execution_memory + e.world_memory + e.flight_memory + e.buffer_memory;
  return e;
}

uint64_t sim_max_memory() {
  const std::string& value = sim_max_memory_param.get();
  if (value != "auto") return params::parse_bytes(value, "sim_max_memory");
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return 0;  // unknown: no limit
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) / 2;
}

}  // namespace grove::model
