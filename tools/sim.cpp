// `grove sim COLL --algo NAME -n N --size BYTES`: runs a collective's real
// schedules on the simulator and prints the predicted completion time.

#include <unistd.h>

#include <fmt/format.h>

#include "campaigns/sim_jobs.hpp"
#include "command.hpp"
#include "core/params.hpp"
#include "grove/error.hpp"
#include "sim_options.hpp"
#include "transport/sim/trace.hpp"
#include "usage.hpp"

namespace grove::tools {
namespace {

struct SimArgs {
  std::string collective;
  std::string algorithm = "binomial";
  int size = 16;
  std::string bytes = "0";
  int root = 0;
  std::string data = "sizes";
  bool per_rank = false;
  std::string trace;
  std::string max_memory;
  ModelOptions model;
};

int run_sim(const SimArgs& args) {
  params::load_process_params();
  sim::SimConfig config;
  std::unique_ptr<sim::TraceTsvWriter> trace;
  std::optional<uint64_t> max_memory;  // unset: the sim_max_memory parameter
  // Everything the command line names is checked before the simulation.
  const model::SimJob job = interpret_options([&] {
    config = args.model.config();
    config.data = args.data == "real" ? sim::DataMode::real : sim::DataMode::sizes;
    model::JobShape shape;
    shape.collective = args.collective;
    shape.algorithm = args.algorithm;
    shape.size = args.size;
    shape.bytes = params::parse_bytes(args.bytes, "--size");
    shape.root = args.root;
    model::SimJob made = model::make_sim_job(shape);
    if (!args.max_memory.empty()) max_memory = params::parse_bytes(args.max_memory, "--max-memory");
    if (!args.trace.empty()) trace = std::make_unique<sim::TraceTsvWriter>(args.trace);
    return made;
  });
  model::SimOptions options;
  options.per_rank = args.per_rank;
  options.trace = trace.get();
  options.max_memory = max_memory;
  // A progress line on a terminal, rewritten in place.
  const bool terminal = isatty(STDERR_FILENO) == 1;
  bool reported = false;
  if (terminal) {
    options.progress = [&reported](const model::SimProgress& p) {
      const double share =
          p.events_expected > 0 ? 100.0 * static_cast<double>(p.events) / p.events_expected : 0;
      fmt::print(
          stderr,
          "\rsim: {:.1f} us simulated, {} events (~{:.0f}%), {:.2g} events/s, {} of {} ranks "
          "done   ",
          sim::to_micros(p.now), p.events, share, static_cast<double>(p.events) / p.wall_seconds,
          p.ranks_done, p.ranks);
      reported = true;
    };
  }
  model::SimResult result;
  try {
    result = model::run_on_sim(job, config, options);
  } catch (...) {
    if (reported) fmt::print(stderr, "\n");
    throw;
  }
  if (reported) fmt::print(stderr, "\n");
  if (trace) trace->close();

  const double simulate_s = result.wall_seconds - result.build_seconds;
  fmt::print("simulated: {}\n", job.what);
  fmt::print("model:     {}\n", config.describe());
  fmt::print("estimate:  {}\n", result.estimate.summary());
  fmt::print("completion_us\t{:.6f}\n", sim::to_micros(result.completion));
  fmt::print("last_rank\t{}\n", result.last_rank);
  fmt::print("messages\t{}\nbytes\t{}\nevents\t{}\n", result.stats.messages_sent,
             result.stats.bytes_sent, result.stats.events);
  fmt::print("schedules\t{} built, {} shared by many ranks\n", result.schedules_built,
             result.schedules_shared);
  fmt::print("wall_s\t{:.3f}\t(schedules and setup {:.3f})\n", result.wall_seconds,
             result.build_seconds);
  fmt::print("events_per_s\t{:.3g}\n",
             simulate_s > 0 ? static_cast<double>(result.stats.events) / simulate_s : 0.0);
  if (config.data == sim::DataMode::real) fmt::print("verified\tevery rank's result\n");
  if (args.per_rank) {
    fmt::print("rank\tcompletion_us\n");
    for (size_t r = 0; r < result.per_rank.size(); ++r)
      fmt::print("{}\t{:.6f}\n", r, sim::to_micros(result.per_rank[r]));
  }
  if (trace) fmt::print("trace\t{}\n", args.trace);
  return 0;
}

const RegisterCommand sim_command{{
    "sim",
    "Simulate a collective's schedules on N ranks and print the predicted completion time",
    [](CLI::App& sub) -> std::function<int()> {
      auto args = std::make_shared<SimArgs>();
      sub.add_option("collective", args->collective, "Collective: bcast, barrier, ...")->required();
      sub.add_option("--algo", args->algorithm, "Algorithm: binomial, knomial:4, kary:8, ...");
      sub.add_option("-n,--ranks", args->size, "Number of ranks")->check(CLI::Range(1, 1 << 20));
      sub.add_option("--size", args->bytes, "Message size (4096, 64KiB, 10KB, ...)");
      sub.add_option("--root", args->root, "Root rank");
      sub.add_option("--data", args->data,
                     "real: move and verify bytes; sizes: lengths only (default, for scale)")
          ->check(CLI::IsMember({"real", "sizes"}));
      sub.add_flag("--per-rank", args->per_rank, "Print every rank's completion time");
      sub.add_option("--trace", args->trace,
                     "Write a per-message TSV trace (t_start_us t_end_us src dst bytes "
                     "channel t_wire_us)");
      sub.add_option("--max-memory", args->max_memory,
                     "Refuse a run whose estimated peak memory is larger (8GiB, ...; 0: no limit; "
                     "default: the sim_max_memory parameter, half the machine's memory)");
      args->model.add_to(sub);
      return [args] { return run_sim(*args); };
    },
}};

}  // namespace
}  // namespace grove::tools
