#include "model/sim_run.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "grove/error.hpp"
#include "model/sim_estimate.hpp"
#include "model/sim_schedules.hpp"
#include "sched/executor.hpp"
#include "transport/tag.hpp"

namespace grove::model {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

SimResult run_on_sim(const SimJob& job, const sim::SimConfig& config, const SimOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  SimSchedules schedules(job);
  SimResult result;
  result.estimate = estimate_sim(job, config, schedules);
  const uint64_t limit = options.max_memory ? *options.max_memory : sim_max_memory();
  if (limit > 0 && result.estimate.memory > static_cast<double>(limit)) {
    throw Error(Errc::invalid_argument,
                fmt::format("{}: not run: {}, more than the {:.2f} GB allowed (sim_max_memory; "
                            "fewer ranks, or an algorithm with fewer messages in flight, fit)",
                            job.what, result.estimate.summary(), static_cast<double>(limit) / 1e9));
  }
  sim::SimWorld world(job.size, config);
  world.set_trace(options.trace);
  world.set_completion_prefetch(sched::Execution::completion_fn(),
                                &sched::Execution::prefetch_completion);
  const bool real = config.data == sim::DataMode::real;
  const size_t n = static_cast<size_t>(job.size);

  std::vector<std::unique_ptr<sched::Execution>> runs(n);
  std::vector<std::vector<std::byte>> inputs, outputs;
  if (real) {
    inputs.resize(n);
    outputs.resize(n);
  }
  if (options.per_rank) result.per_rank.assign(n, -1);
  size_t remaining = n;
  std::optional<Error> failure;

  // A rank is finished once its execution is done: record when, check for
  // an error, and free its executor state (and its schedule unless shared).
  auto finish = [&](int rank) {
    auto& run = runs[static_cast<size_t>(rank)];
    if (!run || !run->done()) return;
    if (run->error() && !failure) failure = *run->error();
    const sim::Time at = world.now();
    if (options.per_rank) result.per_rank[static_cast<size_t>(rank)] = at;
    if (at >= result.completion) {
      if (at > result.completion || remaining == n) result.last_rank = rank;
      result.completion = at;
    }
    run.reset();
    if (--remaining == 0 || failure) world.stop();
  };

  const Tag base_tag = tag::make(1, 0, tag::Topology::none, 0, 0);
  // Executions are made grouped by schedule (each group in rank order):
  // the executor finds a schedule's StepGraph in a small cache of recent
  // ones, so ranks taking turns among more shared schedules than it keeps
  // (bcast scatter_allgather's shapes) would each build a graph of their
  // own. Making them posts nothing; they start in rank order below.
  std::vector<std::shared_ptr<const sched::Schedule>> rank_schedules(n);
  std::vector<int> order(n);
  {
    std::vector<const sched::Schedule*> shared;  // group i + 1; a rank's own: group 0
    std::vector<uint32_t> group(n, 0);
    for (int rank = 0; rank < job.size; ++rank) {
      auto& schedule = rank_schedules[static_cast<size_t>(rank)];
      schedule = schedules.of(rank);
      order[static_cast<size_t>(rank)] = rank;
      if (schedules.ranks_of(*schedule) <= 1) continue;
      auto it = std::find(shared.begin(), shared.end(), schedule.get());
      if (it == shared.end()) it = shared.insert(shared.end(), schedule.get());
      group[static_cast<size_t>(rank)] = static_cast<uint32_t>(it - shared.begin()) + 1;
    }
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return group[static_cast<size_t>(a)] < group[static_cast<size_t>(b)];
    });
  }
  for (const int rank : order) {
    std::shared_ptr<const sched::Schedule> schedule =
        std::move(rank_schedules[static_cast<size_t>(rank)]);
    sched::Buffers buffers;
    buffers.input_length = job.input_bytes ? job.input_bytes(rank) : 0;
    buffers.output_length = job.output_bytes ? job.output_bytes(rank) : 0;
    if (real) {
      auto& in = inputs[static_cast<size_t>(rank)];
      auto& out = outputs[static_cast<size_t>(rank)];
      in.assign(buffers.input_length, std::byte{0});
      out.assign(buffers.output_length, std::byte{0});
      if (job.fill) job.fill(rank, in, out);
      buffers.input = in.data();
      buffers.output = out.data();
    }
    runs[static_cast<size_t>(rank)] = std::make_unique<sched::Execution>(
        world.transport(rank), std::move(schedule), buffers, base_tag);
  }
  result.schedules_built = schedules.built();
  result.schedules_shared = schedules.shared();
  // Executions start at virtual time 0 in rank order, after all exist, so no
  // message finds its receiver missing.
  for (int rank = 0; rank < job.size; ++rank)
    runs[static_cast<size_t>(rank)]->start();
  result.build_seconds = seconds_since(wall_start);
  // Each execution says when it ends, instead of being asked after every
  // completion.
  using Finish = decltype(finish);
  struct Ender {
    Finish* end;
    int rank;
  };
  std::vector<Ender> enders(n);
  for (int rank = 0; rank < job.size; ++rank) {
    enders[static_cast<size_t>(rank)] = Ender{&finish, rank};
    runs[static_cast<size_t>(rank)]->notify_when_done(
        [](void* e) { (*static_cast<Ender*>(e)->end)(static_cast<Ender*>(e)->rank); },
        &enders[static_cast<size_t>(rank)]);
  }
  // Executions still running when this returns or throws are destroyed
  // (and aborted) after `finish` and `enders`: they must not notify.
  struct Unhook {
    std::vector<std::unique_ptr<sched::Execution>>& runs;
    ~Unhook() {
      for (auto& run : runs)
        if (run) run->notify_when_done(nullptr, nullptr);
    }
  } unhook{runs};
  for (int rank = 0; rank < job.size; ++rank)
    finish(rank);

  // Progress is looked at between batches of kCheckEvery events.
  constexpr uint64_t kCheckEvery = 1u << 16;
  const auto sim_start = std::chrono::steady_clock::now();
  double next_report = options.progress_seconds;
  auto report = [&] {
    const double wall = seconds_since(sim_start);
    if (wall < next_report) return;
    next_report = wall + options.progress_seconds;
    options.progress(SimProgress{world.now(), world.stats().events, result.estimate.events,
                                 job.size - static_cast<int>(remaining), job.size, wall});
  };
  // finish() stops the world once every rank is done or one failed; a batch
  // that ends early otherwise found nothing left before the virtual limit.
  while (remaining > 0 && !failure) {
    const uint64_t processed = world.run_some(kCheckEvery, options.virtual_limit);
    if (remaining == 0 || failure || processed < kCheckEvery) break;
    if (options.progress) report();
  }
  if (failure) throw Error(failure->code(), fmt::format("{}: {}", job.what, failure->what()));
  if (remaining > 0) {
    int stuck = 0;
    while (!runs[static_cast<size_t>(stuck)])
      ++stuck;
    const bool over_time = !world.idle();
    throw Error(Errc::timeout,
                fmt::format("{}: {} of {} ranks did not finish ({} at virtual {} us); rank {} "
                            "waits on: {}",
                            job.what, remaining, n,
                            over_time ? "virtual time limit reached" : "nothing left in flight",
                            sim::to_micros(world.now()), stuck,
                            runs[static_cast<size_t>(stuck)]->describe_pending()));
  }
  if (real && job.check) {
    for (int rank = 0; rank < job.size; ++rank) {
      const std::string why = job.check(rank, outputs[static_cast<size_t>(rank)]);
      if (!why.empty())
        throw Error(Errc::internal,
                    fmt::format("{}: rank {} has a wrong result: {}", job.what, rank, why));
    }
  }
  result.stats = world.stats();
  result.wall_seconds = seconds_since(wall_start);
  return result;
}

}  // namespace grove::model
