// `grove tune`: the predicted-best algorithm per collective, ranks and size
// from a probe's pLogP table (tools/tuning/tune.hpp), as a tuning file, as
// Open MPI's and MPICH's tuning files, or set against measurements.
//
//   grove tune --plogp FILE --out FILE [--ranks 2-16,32:1024] [--sizes 1:4MiB]
//   grove run -n N grove tune --plogp FILE --out FILE --verify K [--exhaustive]
//   grove tune --plogp FILE --export openmpi|mpich FILE
//   grove tune --plogp FILE --report TSV... [--tuning FILE]   (docs/tuning.md)
//   grove tune --mapping                  (grove's algorithms against the peers')

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>

#include <fmt/format.h>

#include "command.hpp"
#include "core/params.hpp"
#include "grove/error.hpp"
#include "grove/session.hpp"
#include "tuning/export.hpp"
#include "tuning/model_source.hpp"
#include "tuning/report.hpp"
#include "tuning/tune.hpp"
#include "tuning/verify.hpp"

namespace grove::tools {
namespace {

struct TuneArgs {
  std::string plogp;
  std::string out;
  std::string model = "plogp";
  std::string ranks = "2-16,32:1024";
  std::string sizes = "1:4MiB";
  std::vector<std::string> collectives;
  int verify = 0;
  bool exhaustive = false;
  std::vector<std::string> export_args;
  std::vector<std::string> report;
  std::string tuning;
  std::string calibration;                    // with --report: bench --calibrate's file
  std::vector<std::string> calibration_refs;  // and the ping-pongs around the probe
  // With --calibration: more probe tables, one per state, each
  // "PLOGP,REF[,REF...]" (its table and the ping-pongs around its probe).
  std::vector<std::string> states;
  int ranks_per_host = 0;  // with --report: 0, every rank on one host
  tuning::MeasureOptions measure;
  bool mapping = false;
};

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.close();
  if (!out) throw Error(Errc::usage, fmt::format("grove tune: cannot write {}", path));
}

std::string command_line(const TuneArgs& a) {
  std::string out =
      fmt::format("grove tune --plogp {} --ranks {} --sizes {}", a.plogp, a.ranks, a.sizes);
  if (a.model != "plogp") out += " --model " + a.model;
  if (!a.collectives.empty()) out += fmt::format(" --coll {}", fmt::join(a.collectives, ","));
  if (a.verify > 0) out += fmt::format(" --verify {}", a.verify);
  return out;
}

int run_tune(const TuneArgs& args) {
  params::load_process_params();
  if (args.mapping) {
    fmt::print("{}", tuning::mapping_table_markdown());
    return 0;
  }
  if (args.plogp.empty()) throw Error(Errc::usage, "grove tune: --plogp FILE is required");
  const tuning::ModelSource model = tuning::load_model(args.plogp, args.model);
  if (!args.report.empty()) {
    if (!args.tuning.empty())
      params::Registry::global().set("tuning_file", args.tuning, params::Source::command_line);
    std::vector<tuning::ModelSource> models{model};
    std::vector<std::vector<std::string>> reference_sets{args.calibration_refs};
    if (!args.states.empty() && args.calibration.empty())
      throw Error(Errc::usage, "grove tune: --state goes with --calibration");
    for (const std::string& state : args.states) {
      std::vector<std::string> fields;
      for (size_t pos = 0; pos <= state.size();) {
        const size_t comma = std::min(state.find(',', pos), state.size());
        fields.push_back(state.substr(pos, comma - pos));
        pos = comma + 1;
      }
      if (fields.size() < 2 ||
          std::any_of(fields.begin(), fields.end(), [](const std::string& f) { return f.empty(); }))
        throw Error(Errc::usage,
                    fmt::format("grove tune: --state '{}': expected PLOGP,REF[,REF...]: a probe "
                                "table and the calibrations taken around its probe",
                                state));
      models.push_back(tuning::load_model(fields.front(), args.model));
      reference_sets.emplace_back(fields.begin() + 1, fields.end());
    }
    std::optional<tuning::StateCorrection> correction;
    if (!args.calibration.empty()) correction.emplace(args.calibration, reference_sets);
    fmt::print("{}",
               tuning::report_markdown(args.report, models, correction ? &*correction : nullptr,
                                       args.ranks_per_host));
    return 0;
  }
  if (args.ranks_per_host != 0)
    throw Error(Errc::usage, "grove tune: --ranks-per-host goes with --report");
  if (!args.calibration.empty() || !args.calibration_refs.empty() || !args.states.empty())
    throw Error(Errc::usage,
                "grove tune: --calibration, --calibration-ref and --state go with --report");
  const int modes = !args.out.empty() + !args.export_args.empty();
  if (modes != 1) {
    throw Error(Errc::usage,
                "grove tune: give --out FILE, --export openmpi|mpich FILE, or --report TSV...");
  }
  if (args.verify > 0 && args.out.empty()) {
    throw Error(Errc::usage, "grove tune: --verify writes the verified table: give --out FILE");
  }
  if (args.exhaustive && args.verify == 0) {
    throw Error(Errc::usage, "grove tune: --exhaustive compares with --verify K: give both");
  }

  tuning::Grid grid = tuning::make_grid(args.ranks, args.sizes, args.collectives);
  std::unique_ptr<Session> session;
  if (args.verify > 0) {
    session = std::make_unique<Session>();
    if (session->size() < 2) {
      throw Error(Errc::usage,
                  "grove tune --verify measures on the current job: run it as `grove run -n N "
                  "grove tune ... --verify K` with N >= 2");
    }
    if (std::find(grid.ranks.begin(), grid.ranks.end(), session->size()) == grid.ranks.end()) {
      grid.ranks.push_back(session->size());
      std::sort(grid.ranks.begin(), grid.ranks.end());
    }
  }
  const auto t0 = std::chrono::steady_clock::now();
  tuning::Tuning t = tuning::tune(grid, model.port);
  const double model_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  t.model = model.description;
  t.plogp = model.plogp;
  t.command = command_line(args);
  const bool leader = !session || session->rank() == 0;
  if (session) {
    const tuning::VerifyReport report =
        tuning::verify(session->world(), t, model.port, args.verify, args.measure, args.exhaustive);
    if (leader) fmt::print("{}", report.text());
  }
  if (!leader) return 0;
  fmt::print("model: {}\n", model.description);
  fmt::print("{} cells ({} collectives, {} rank counts, {} sizes) ranked in {:.3f} s\n",
             t.cells.size(), grid.collectives.size(), grid.ranks.size(), grid.sizes.size(),
             model_seconds);
  if (!args.out.empty()) {
    // The file names its table relative to its own directory, as the
    // reader resolves it (coll/select_table.cpp): a path relative to this
    // process's directory would be found only from there.
    if (!t.plogp.empty() && std::filesystem::path(t.plogp).is_relative()) {
      const std::filesystem::path out_dir = std::filesystem::absolute(args.out).parent_path();
      t.plogp = std::filesystem::absolute(t.plogp).lexically_relative(out_dir).string();
    }
    const std::string text = tuning::tuning_file_text(t);
    // What the file says must read back: a broken file is caught here.
    coll::parse_select_table(text, args.out);
    write_file(args.out, text);
    fmt::print("wrote {} (use: --param tuning_file={} or GROVE_TUNING_FILE)\n", args.out, args.out);
    return 0;
  }
  const std::string& kind = args.export_args[0];
  const std::string& path = args.export_args[1];
  tuning::ExportFiles files;
  if (kind == "openmpi") {
    files = tuning::export_openmpi(t, model.port, path);
  } else if (kind == "mpich") {
    files = tuning::export_mpich(t, model.port, path);
  } else {
    throw Error(Errc::usage, fmt::format("--export '{}': openmpi or mpich", kind));
  }
  for (const auto& [file, text] : files.files) {
    write_file(file, text);
    fmt::print("wrote {}\n", file);
  }
  fmt::print("use: {}\n", files.usage);
  return 0;
}

const RegisterCommand tune_command{{
    "tune",
    "Choose algorithms from a pLogP table and the closed forms; write a tuning file or export one",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<TuneArgs>();
      sub.add_option("--plogp", a->plogp, "The pLogP table (grove probe --out); required");
      sub.add_option("--out", a->out, "Write the tuning file (docs/selection.md format)");
      sub.add_option("--model", a->model, "plogp (the table) or hockney (its fit)")
          ->capture_default_str();
      sub.add_option("--ranks", a->ranks, "Rank counts: A-B, A:B (doubling), N; comma list")
          ->capture_default_str();
      sub.add_option("--sizes", a->sizes, "Sizes as grove bench --sizes")->capture_default_str();
      sub.add_option("--coll", a->collectives, "Only these collectives")->delimiter(',');
      sub.add_option("--verify", a->verify,
                     "Measure the model's top K per cell on this job and keep the fastest");
      sub.add_flag("--exhaustive", a->exhaustive,
                   "With --verify: also run grove bench --algo all over the same cells, compare");
      sub.add_option("--export", a->export_args, "openmpi|mpich FILE: the peer's tuning file")
          ->expected(2);
      sub.add_option("--report", a->report, "Bench TSVs: predicted vs measured (docs/tuning.md)")
          ->expected(1, 1000);
      sub.add_option("--tuning", a->tuning, "With --report: the tuning file auto ran with");
      sub.add_option("--calibration", a->calibration,
                     "With --report: grove bench --calibrate's file; each cell is compared in "
                     "the machine's state beside it (docs/tuning.md)");
      sub.add_option("--calibration-ref", a->calibration_refs,
                     "With --calibration: calibration files taken around the probe (the "
                     "reference state)")
          ->expected(1, 100);
      sub.add_option("--state", a->states,
                     "With --calibration: another probe table, for another of the machine's "
                     "states: PLOGP,REF[,REF...] (its calibrations around the probe); each cell "
                     "is priced with the table of the state nearest its own (docs/tuning.md)");
      sub.add_option("--ranks-per-host", a->ranks_per_host,
                     "With --report: the benchmarked jobs' ranks per host, for what auto chose "
                     "(0: all on one host)")
          ->check(CLI::NonNegativeNumber);
      sub.add_option("--cell-time", a->measure.cell_seconds, "Seconds per measured cell")
          ->capture_default_str();
      sub.add_option("--warmup", a->measure.warmup, "Untimed calls per measured cell")
          ->capture_default_str();
      sub.add_option("--min-iters", a->measure.min_iterations, "Fewest timed calls per cell")
          ->capture_default_str();
      sub.add_option("--max-iters", a->measure.max_iterations, "Most timed calls per cell")
          ->capture_default_str();
      sub.add_flag("--mapping", a->mapping,
                   "Print grove's algorithms against Open MPI's and MPICH's (docs/tuning.md)");
      return [a] { return run_tune(*a); };
    },
}};

}  // namespace
}  // namespace grove::tools
