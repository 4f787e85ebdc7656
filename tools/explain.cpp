// `grove explain COLL -n N --size BYTES [--tuning FILE] [--measure]`: the
// algorithm the call runs and why, every candidate's predicted time and,
// with --measure (under `grove run -n N`), its measured median beside it
// (tools/tuning/explain.hpp).

#include <fmt/format.h>

#include "command.hpp"
#include "core/params.hpp"
#include "grove/error.hpp"
#include "grove/session.hpp"
#include "tuning/explain.hpp"
#include "tuning/measure.hpp"
#include "tuning/model_source.hpp"

namespace grove::tools {
namespace {

struct ExplainArgs {
  std::string collective;
  int ranks = 0;
  std::string size = "0";
  std::string tuning;
  std::string plogp;
  std::string model = "plogp";
  bool measure = false;
  bool nonblocking = false;
  int ranks_per_host = 0;  // without --measure: 0, every rank on one host
  std::vector<std::string> sets;
  tuning::MeasureOptions options;
};

int run_explain(const ExplainArgs& args) {
  params::load_process_params();
  auto& registry = params::Registry::global();
  for (const std::string& kv : args.sets) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos)
      throw Error(Errc::usage, fmt::format("--param '{}': expected name=value", kv));
    registry.set(kv.substr(0, eq), kv.substr(eq + 1), params::Source::command_line);
  }
  if (!args.tuning.empty()) registry.set("tuning_file", args.tuning, params::Source::command_line);
  if (args.ranks < 1) throw Error(Errc::usage, "grove explain: -n N (at least 1) is required");

  tuning::ExplainCall call{args.collective, args.ranks, params::parse_bytes(args.size, "--size"),
                           !args.nonblocking};
  // The model: --plogp, else the tuning file's table, else sim_plogp_table.
  std::string plogp = args.plogp;
  if (plogp.empty()) {
    if (auto table = coll::tuning_table(); table && !table->plogp.empty()) plogp = table->plogp;
  }
  if (plogp.empty()) plogp = registry.get("sim_plogp_table").text;
  std::optional<tuning::ModelSource> model;
  if (!plogp.empty()) model = tuning::load_model(plogp, args.model);

  std::unique_ptr<Session> session;
  tuning::JobContext shm = tuning::context_from_params(args.ranks, args.ranks_per_host);
  if (args.measure && args.ranks_per_host != 0) {
    throw Error(Errc::usage,
                "grove explain: --ranks-per-host describes a job without running it; with "
                "--measure the job's own hosts count");
  }
  if (args.measure) {
    session = std::make_unique<Session>();
    if (session->size() != args.ranks) {
      throw Error(Errc::usage,
                  fmt::format("grove explain --measure runs the call on this job: -n {} must be "
                              "the job's size ({}; run it as `grove run -n {} grove explain ...`)",
                              args.ranks, session->size(), args.ranks));
    }
    shm = tuning::context_of(session->world());
  }
  tuning::Explanation e =
      tuning::explain(call, shm, model ? &model->port : nullptr, model ? model->description : "");
  double auto_us = -1;
  if (session) {
    std::vector<std::string> specs;
    std::vector<size_t> rows;
    for (size_t i = 0; i < e.rows.size(); ++i) {
      if (!e.rows[i].cannot_run.empty()) continue;
      specs.push_back(e.rows[i].spec.to_string());
      rows.push_back(i);
    }
    specs.push_back("auto");
    const std::vector<double> medians =
        tuning::measure_specs(session->world(), call.collective, call.bytes, specs, args.options);
    for (size_t i = 0; i < rows.size(); ++i)
      if (!std::isnan(medians[i])) e.rows[rows[i]].measured_us = medians[i];
    auto_us = medians.back();
    if (session->rank() != 0) return 0;
  }
  fmt::print("{}", e.text());
  if (auto_us >= 0) {
    fmt::print(
        "measured: the call as made (auto) {:.3f} us; {} calls per cell at most, {} s per "
        "cell (grove bench's method)\n",
        auto_us, args.options.max_iterations, args.options.cell_seconds);
  }
  return 0;
}

const RegisterCommand explain_command{{
    "explain",
    "Which algorithm a call runs and why, with every candidate's predicted (and measured) time",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<ExplainArgs>();
      sub.add_option("collective", a->collective, "bcast, scatter, allreduce, ...")->required();
      sub.add_option("-n,--ranks", a->ranks, "Ranks of the call")->required();
      sub.add_option("--size", a->size,
                     "Bytes: the message (bcast), one block (scatter, gather, allgather, "
                     "alltoall, reduce_scatter) or the float32 vector (reduce, allreduce)")
          ->required();
      sub.add_option("--tuning", a->tuning, "A tuning file (as tuning_file=FILE)");
      sub.add_option("--plogp", a->plogp, "The pLogP table to predict with");
      sub.add_option("--model", a->model, "plogp or hockney (the table's fit)")
          ->capture_default_str();
      sub.add_flag("--measure", a->measure,
                   "Measure every candidate on this job (grove run -n N grove explain ...)");
      sub.add_flag("--nonblocking", a->nonblocking, "Explain the non-blocking form");
      sub.add_option("--ranks-per-host", a->ranks_per_host,
                     "Without --measure: the job's ranks per host (0: all on one host)")
          ->check(CLI::NonNegativeNumber);
      sub.add_option("--param", a->sets, "Set name=value first (e.g. bcast_algorithm=binomial)");
      sub.add_option("--cell-time", a->options.cell_seconds, "Seconds per measured cell")
          ->capture_default_str();
      sub.add_option("--warmup", a->options.warmup, "Untimed calls per measured cell")
          ->capture_default_str();
      sub.add_option("--min-iters", a->options.min_iterations, "Fewest timed calls per cell")
          ->capture_default_str();
      sub.add_option("--max-iters", a->options.max_iterations, "Most timed calls per cell")
          ->capture_default_str();
      return [a] { return run_explain(*a); };
    },
}};

}  // namespace
}  // namespace grove::tools
