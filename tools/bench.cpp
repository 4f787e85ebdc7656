// `grove bench`: collectives x algorithms x sizes, run under `grove run`.

#include <unistd.h>

#include <chrono>

#include <fmt/format.h>

#include "command.hpp"
#include "core/params.hpp"
#include "grove/error.hpp"
#include "grove/session.hpp"
#include "rma_bench_common.hpp"
#include "suite/modes.hpp"
#include "suite/report.hpp"
#include "suite/runner.hpp"

namespace grove::tools {
namespace {

struct BenchArgs {
  std::string collectives;
  std::string algorithm;  // empty: all for a plain run, auto with --peers
  std::string sizes = "1:1MiB:4";
  std::string cadence = "isolated";
  std::string tsv;
  double cell_seconds = 0.1;
  int warmup = 3;
  int min_iterations = 5;
  int max_iterations = 10000;
  bool cpu_time = false;
  std::string calibrate;  // a plain run only: suite/calibration.hpp
  int calibrate_retries = 0;
  bench::ModeArgs mode;  // --peers, --compare, --from-tsv, --json, --markdown, --plot
};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    if (comma > pos) out.push_back(text.substr(pos, comma - pos));
    pos = comma + 1;
  }
  return out;
}

int run_bench(const BenchArgs& args) {
  bench::RunOptions options;
  options.collectives = split_list(args.collectives);
  options.algorithm = args.algorithm.empty() ? "all" : args.algorithm;
  options.sizes = bench::parse_sizes(args.sizes);
  options.cadence = bench::parse_cadence(args.cadence);
  options.cell_seconds = args.cell_seconds;
  options.warmup = args.warmup;
  options.min_iterations = args.min_iterations;
  options.max_iterations = args.max_iterations;
  options.cpu_time = args.cpu_time;
  options.calibration_path = args.calibrate;
  options.calibration_retries = args.calibrate_retries;
  // Bad names are refused before the session starts and anything is printed.
  params::load_process_params();
  bench::check_options(options);

  Session session;
  const bool leader = session.rank() == 0;
  const bool show_progress = leader && isatty(STDERR_FILENO);
  const auto begin = std::chrono::steady_clock::now();
  auto progress = [&](size_t done, size_t total) {
    if (!show_progress) return;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    const double eta = elapsed / static_cast<double>(done) * static_cast<double>(total - done);
    fmt::print(stderr, "\r{}/{} cells, {:.0f} s elapsed, ~{:.0f} s left   ", done, total, elapsed,
               eta);
    if (done == total) fmt::print(stderr, "\n");
  };
  if (leader) fmt::print("{}", bench::describe_method(options, session.size()));
  const auto cells = bench::run_cells(session.world(), options, progress);
  if (leader) {
    bench::print_table(stdout, cells);
    if (!args.tsv.empty()) bench::write_tsv(args.tsv, "grove", cells);
    bench::RunSummary summary;
    summary.settings = {bench::describe_method(options, session.size())};
    summary.cells = bench::to_tsv_cells(cells, "grove");
    bench::write_outputs(args.mode, summary);
  }
  return 0;
}

// --coll ring, p2p, put, get (the form of `grove rma-bench`): ring
// channels with --algo safe, raw (default both) and point-to-point, measured
// by the rma-bench machinery (tools/rma_bench.cpp: latency, goodput, inject
// rate), or put and get on a window (rma_bench_window.cpp, both together),
// with rma-bench's defaults; --sizes and --tsv are passed on. They are not
// collectives, so they are not mixed with them in one run, and they run as
// ranks of a job (grove run -n N), not under --peers.
bool names_rma(const std::vector<std::string>& collectives) {
  for (const std::string& c : collectives)
    if (c == "ring" || c == "p2p" || c == "put" || c == "get") return true;
  return false;
}

int run_rma(const BenchArgs& args, bool sizes_given) {
  rma::Args rma_args;
  std::string modes;
  for (const std::string& c : split_list(args.collectives)) {
    std::string add;
    if (c == "ring") {
      const std::string algo =
          args.algorithm.empty() || args.algorithm == "all" || args.algorithm == "auto"
              ? "safe,raw"
              : args.algorithm;
      for (const std::string& a : split_list(algo)) {
        if (a != "safe" && a != "raw") {
          throw Error(Errc::usage,
                      fmt::format("--algo '{}' for ring: the ring's algorithms are safe, raw", a));
        }
      }
      add = algo;
    } else if (c == "p2p") {
      add = "p2p";
    } else if (c == "put" || c == "get") {
      rma_args.table = "window";  // measures both
    } else {
      throw Error(Errc::usage,
                  fmt::format("--coll: '{}' is a collective; ring, p2p, put and get are run on "
                              "their own (grove rma-bench), not mixed with collectives",
                              c));
    }
    modes += (modes.empty() ? "" : ",") + add;
  }
  if (bench::is_orchestration(args.mode) || !args.calibrate.empty()) {
    throw Error(Errc::usage,
                "--coll ring, p2p, put, get: run them under grove run -n N; --peers, --compare, "
                "--from-tsv, --background and --calibrate do not apply");
  }
  if (rma_args.table == "window" && !modes.empty()) {
    throw Error(Errc::usage, "--coll: put and get (a window) run apart from ring and p2p");
  }
  if (!modes.empty()) rma_args.modes = modes;
  if (sizes_given) rma_args.sizes = args.sizes;
  rma_args.tsv = args.tsv;
  return rma::run(rma_args);
}

// --peers, --compare, --from-tsv: not a rank of a job; bench/suite/modes.hpp.
int run_orchestration(const BenchArgs& args) {
  bench::PeerRunOptions suite;
  // A peer has one algorithm (its library's choice), so grove's own choice
  // is the fair default; every algorithm would also multiply the run time.
  suite.algorithm = args.algorithm.empty() ? "auto" : args.algorithm;
  suite.collectives = split_list(args.collectives);
  suite.sizes = bench::parse_sizes(args.sizes);
  suite.cadence = bench::parse_cadence(args.cadence);
  suite.cell_seconds = args.cell_seconds;
  suite.warmup = args.warmup;
  suite.min_iterations = args.min_iterations;
  suite.max_iterations = args.max_iterations;
  suite.cpu_time = args.cpu_time;
  bench::ModeArgs mode = args.mode;
  mode.tsv = args.tsv;
  return bench::run_mode(mode, suite);
}

const RegisterCommand bench_command{{
    "bench",
    "Benchmark collectives (run it under grove run -n N)",
    [](CLI::App& sub) -> std::function<int()> {
      auto args = std::make_shared<BenchArgs>();
      sub.add_option("--coll", args->collectives,
                     "Collectives, comma-separated (default: all); or ring (--algo safe,raw), "
                     "p2p; or put,get (a window): grove rma-bench's measurements");
      sub.add_option("--algo", args->algorithm,
                     "all, auto, or one algorithm name (default: all; auto with --peers)");
      CLI::Option* sizes_option =
          sub.add_option("--sizes", args->sizes,
                         "FROM:TO[:FACTOR] and/or a comma list of sizes (ring, p2p: grove "
                         "rma-bench's default)")
              ->capture_default_str();
      sub.add_option("--cadence", args->cadence,
                     "isolated (barrier before each call), barrier-after (OSU's loop) or "
                     "streaming")
          ->capture_default_str();
      sub.add_option("--tsv", args->tsv, "Write raw samples to this TSV file");
      sub.add_option("--cell-time", args->cell_seconds, "Seconds per cell after warm-up")
          ->capture_default_str()
          ->check(CLI::Range(0.0, 3600.0));
      sub.add_option("--warmup", args->warmup, "Untimed calls per cell")
          ->capture_default_str()
          ->check(CLI::Range(0, 1000000));
      sub.add_option("--min-iters", args->min_iterations, "Minimum timed calls per cell")
          ->capture_default_str()
          ->check(CLI::Range(1, 100000000));
      sub.add_option("--max-iters", args->max_iterations, "Maximum timed calls per cell")
          ->capture_default_str()
          ->check(CLI::Range(1, 100000000));
      sub.add_flag("--cpu-time", args->cpu_time,
                   "Also report each rank's CPU time per call (getrusage) as ALGO/cpu_per_call "
                   "rows, one sample per rank (grove's jobs only with --peers/--background)");
      sub.add_option("--calibrate", args->calibrate,
                     "Append a ping-pong of ranks 0 and 1 (8 B and 1 MiB) just before and after "
                     "each cell to this file: the machine's state per cell (a plain run only)");
      sub.add_option("--calibrate-retries", args->calibrate_retries,
                     "With --calibrate: run a cell again, up to this many times, while its "
                     "ping-pongs before and after differ by more than 20% at 1 MiB (the machine "
                     "changed state during it)")
          ->capture_default_str()
          ->check(CLI::Range(0, 100));
      bench::ModeArgs& m = args->mode;
      sub.add_option("--peers", m.peers, "Also run these peers, interleaved: openmpi,mpich,gloo");
      sub.add_option("-n,--ranks", m.ranks, "Ranks per job with --peers");
      sub.add_option("--rounds", m.rounds, "Interleaved rounds with --peers")
          ->capture_default_str()
          ->check(CLI::Range(1, 1000));
      sub.add_option("--wait-policies", m.wait_policies,
                     "With --peers: run grove once per wait_policy (comma list or 'all')");
      sub.add_option("--grove-exe", m.grove_executable,
                     "grove executable of the grove rounds (default: this one)");
      sub.add_option("--peer-dir", m.peer_dir, "Where grove-peer-* are (default: build tree)");
      sub.add_option("--job-timeout", m.job_timeout_seconds, "Seconds per job (0: derived)");
      sub.add_option("--background", m.background,
                     "Also run every library beside a background load: nice-busy,daemon "
                     "(orchestrated like --peers; -n N)");
      sub.add_flag("--keep-logs", m.keep_logs, "Keep the per-round logs and TSVs of --peers");
      sub.add_option("--compare", m.compare, "A.tsv B.tsv: per-cell ratios A/B with 95% CIs")
          ->expected(2);
      sub.add_option("--from-tsv", m.from_tsv, "Summarise saved TSVs instead of running")
          ->expected(1, 1000);
      sub.add_option("--json", m.json, "Write a JSON summary");
      sub.add_option("--markdown", m.markdown, "Write a Markdown table");
      sub.add_option("--plot", m.plot, "Plot time vs size (FILE.svg or FILE.png, gnuplot)");
      return [args, sizes_option] {
        if (names_rma(split_list(args->collectives)))
          return run_rma(*args, sizes_option->count() > 0);
        if (args->calibrate_retries > 0 && args->calibrate.empty())
          throw Error(Errc::usage, "--calibrate-retries goes with --calibrate FILE");
        if (bench::is_orchestration(args->mode) && !args->calibrate.empty()) {
          throw Error(Errc::usage,
                      "--calibrate applies to a plain run under a launcher, not to --peers, "
                      "--compare or --from-tsv");
        }
        return bench::is_orchestration(args->mode) ? run_orchestration(*args) : run_bench(*args);
      };
    },
}};

}  // namespace
}  // namespace grove::tools
