#include "suite/peer_rounds.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "grove/error.hpp"
#include "suite/background.hpp"
#include "suite/cells.hpp"
#include "suite/subprocess.hpp"

namespace grove::bench {
namespace {

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (const auto& p : parts)
    out += (out.empty() ? "" : std::string(separator)) + p;
  return out;
}

std::string find_peer_executable(const std::string& name, const PeerRunOptions& options) {
  const std::string file = "grove-peer-" + name;
  std::vector<std::string> dirs;
  if (!options.peer_dir.empty()) dirs.push_back(options.peer_dir);
  if (const char* env = std::getenv("GROVE_PEER_DIR"); env && *env) dirs.push_back(env);
  const std::filesystem::path grove_dir =
      std::filesystem::path(options.grove_executable).parent_path();
  dirs.push_back((grove_dir / ".." / "bench" / "peers").string());  // build tree
  dirs.push_back(grove_dir.string());                               // installed side by side
  for (const auto& dir : dirs) {
    const std::string candidate = dir + "/" + file;
    if (access(candidate.c_str(), X_OK) == 0) {
      return std::filesystem::weakly_canonical(candidate).string();
    }
  }
  return find_in_path(file);
}

size_t planned_cells(const PeerRunOptions& o) {
  const size_t collectives = o.collectives.empty() ? cells::kSpecs.size() : o.collectives.size();
  return std::max<size_t>(1, collectives * std::max<size_t>(1, o.sizes.size()));
}

double round_cell_seconds(const PeerRunOptions& o) {
  return o.cell_seconds / std::max(1, o.rounds);
}

// Generous: a stalled job is ended, a slow oversubscribed one is not.
double job_timeout(const PeerRunOptions& o) {
  if (o.job_timeout_seconds > 0) return o.job_timeout_seconds;
  const double per_cell = 4 * round_cell_seconds(o) + 2.0 + 0.05 * o.ranks;
  return 120.0 + static_cast<double>(planned_cells(o)) * per_cell * (o.algorithm == "all" ? 10 : 1);
}

std::string cores_line(int ranks) {
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return fmt::format(
      "{} ranks on {} cores{}", ranks, cores,
      ranks > cores ? fmt::format(" (OVERSUBSCRIBED: {} ranks share {} cores)", ranks, cores) : "");
}

// The first "# " line a peer printed: its library and version.
std::string peer_version(const std::string& log_path) {
  std::ifstream in(log_path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("# ", 0) == 0) return line.substr(2);
  }
  return "";
}

}  // namespace

std::vector<std::string> suite_arguments(const PeerRunOptions& o) {
  std::vector<std::string> sizes;
  for (size_t s : o.sizes)
    sizes.push_back(std::to_string(s));
  std::vector<std::string> args;
  if (!o.collectives.empty()) args.insert(args.end(), {"--coll", join(o.collectives, ",")});
  args.insert(
      args.end(),
      {"--sizes", join(sizes, ","), "--cadence", std::string(cadence_name(o.cadence)),
       "--cell-time", fmt::format("{:.6g}", round_cell_seconds(o)), "--warmup",
       std::to_string(o.warmup), "--min-iters", std::to_string(o.min_iterations), "--max-iters",
       std::to_string(
           std::max(o.min_iterations, (o.max_iterations + o.rounds - 1) / std::max(1, o.rounds)))});
  return args;
}

PeerLaunch plan_peer(const std::string& name, const PeerRunOptions& o,
                     const std::vector<std::string>& suite_args) {
  PeerLaunch launch;
  launch.status.name = name;
  launch.contender.label = name;
  const std::string n = std::to_string(o.ranks);
  if (name != "openmpi" && name != "mpich" && name != "gloo") {
    throw Error(Errc::usage,
                fmt::format("--peers: unknown peer '{}' (openmpi, mpich, gloo)", name));
  }
  const std::string exe = find_peer_executable(name, o);
  if (exe.empty()) {
    launch.status.note = fmt::format(
        "grove-peer-{} not built (scripts/deps.sh installs its toolchain; re-run cmake)", name);
    return launch;
  }
  std::vector<std::string>& argv = launch.contender.argv;
  if (name == "openmpi") {
    const std::string mpirun = find_in_path("mpirun.openmpi");
    if (mpirun.empty()) {
      launch.status.note = "mpirun.openmpi not found (package openmpi-bin)";
      return launch;
    }
    // Shared memory (btl vader) plus self, as Open MPI picks on one node;
    // --oversubscribe lets N exceed the cores, and Open MPI then turns on
    // mpi_yield_when_idle by itself. Binding stays at its default. The
    // runtime's own TCP stays on loopback.
    argv = {mpirun, "-n",         n,       "--oversubscribe",    "--mca",
            "btl",  "self,vader", "--mca", "oob_tcp_if_include", "lo"};
    if (geteuid() == 0) argv.insert(argv.begin() + 1, "--allow-run-as-root");
    launch.status.note =
        "mpirun.openmpi --oversubscribe (Open MPI yields when idle once oversubscribed, its "
        "default), btl self,vader (shared memory), default binding, runtime TCP on lo";
  } else if (name == "mpich") {
    const std::string mpirun = find_in_path("mpirun.mpich");
    if (mpirun.empty()) {
      launch.status.note = "mpirun.mpich not found (package mpich)";
      return launch;
    }
    // MPICH's defaults (ch4, shared memory between local ranks, busy
    // polling even when oversubscribed); UCX's network devices and hydra's
    // sockets are held to loopback.
    argv = {mpirun, "-iface", "lo", "-n", n};
    launch.contender.env = {{"UCX_NET_DEVICES", "lo"}};
    launch.status.note =
        "mpirun.mpich defaults (ch4 shared memory, busy polling even when oversubscribed), "
        "hydra -iface lo, UCX_NET_DEVICES=lo";
  } else {
    argv = {exe, "-n", n};
    launch.status.note = "ranks forked by grove-peer-gloo, Gloo options built per call";
  }
  if (name != "gloo") argv.push_back(exe);
  argv.insert(argv.end(), suite_args.begin(), suite_args.end());
  argv.push_back("--quiet");
  launch.status.ran = true;
  return launch;
}

std::vector<tsv::Row> run_rounds(const std::vector<Contender>& contenders, int rounds,
                                 const std::string& work_dir, double job_timeout_seconds,
                                 std::vector<std::pair<std::string, std::string>>& failures,
                                 size_t cells_per_job) {
  std::vector<tsv::Row> rows;
  std::vector<bool> dropped(contenders.size(), false);
  // Progress goes to stderr also when it is a file or pipe (a log, CI):
  // a --peers run can take many minutes and silence looks like a hang. On
  // a terminal one line is rewritten; elsewhere each job gets its own line.
  const bool terminal = isatty(STDERR_FILENO) != 0;
  const auto begin = std::chrono::steady_clock::now();
  const size_t total = contenders.size() * static_cast<size_t>(rounds);
  size_t done = 0;
  for (int round = 1; round <= rounds; ++round) {
    for (size_t i = 0; i < contenders.size(); ++i) {
      const Contender& c = contenders[i];
      if (dropped[i]) {
        ++done;
        continue;
      }
      const double elapsed =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      {
        const double eta =
            done ? elapsed / static_cast<double>(done) * static_cast<double>(total - done) : 0;
        const std::string cells = cells_per_job ? fmt::format(", cells {}/{}", done * cells_per_job,
                                                              total * cells_per_job)
                                                : "";
        fmt::print(stderr, "{}round {}/{}: {:<14} {}/{} jobs{}, {:.0f} s elapsed, ~{:.0f} s left{}",
                   terminal ? "\r" : "grove bench: ", round, rounds, c.label, done, total, cells,
                   elapsed, eta, terminal ? "   " : "\n");
        std::fflush(stderr);
      }
      std::string file_label = c.label;
      std::replace(file_label.begin(), file_label.end(), '/', '_');
      const std::string stem = fmt::format("{}/r{}-{}", work_dir, round, file_label);
      std::vector<std::string> argv = c.argv;
      argv.insert(argv.end(), {"--tsv", stem + ".tsv"});
      ProcessResult r;
      {
        // Started just before and stopped just after the job, on every
        // path out of this block.
        std::optional<BackgroundLoad> load;
        if (!c.background.empty()) {
          load.emplace(c.background);
          std::string pids;
          for (const pid_t pid : load->pids())
            pids += fmt::format(" {}", pid);
          fmt::print(stderr, "{}grove bench: background load pids{}\n", terminal ? "\n" : "", pids);
          std::fflush(stderr);
        }
        r = run_process(argv, c.env, stem + ".log", job_timeout_seconds);
      }
      ++done;
      std::string failure;
      if (r.timed_out)
        failure = fmt::format("timed out after {:.0f} s", job_timeout_seconds);
      else if (r.exit_code != 0)
        failure = fmt::format("exit status {}", r.exit_code);
      std::vector<tsv::Row> got;
      if (failure.empty()) {
        try {
          got = tsv::read_file(stem + ".tsv");
        } catch (const Error& e) {
          failure = e.what();
        }
      }
      if (!failure.empty()) {
        const std::string why =
            fmt::format("round {} failed ({}); log {}:\n{}", round, failure, r.log_path, r.tail());
        if (c.label.rfind("grove", 0) == 0) {
          if (terminal) fmt::print(stderr, "\n");
          throw Error(Errc::internal, fmt::format("grove bench --peers: {} {}", c.label, why));
        }
        failures.emplace_back(c.label, why);
        dropped[i] = true;
        continue;
      }
      for (tsv::Row& row : got) {
        row.library = c.label;
        rows.push_back(std::move(row));
      }
    }
  }
  if (terminal) fmt::print(stderr, "\r{:<90}\r", "");
  return rows;
}

RunSummary run_with_peers(const PeerRunOptions& options_in) {
  PeerRunOptions o = options_in;
  if (o.grove_executable.empty()) o.grove_executable = self_executable();
  if (o.ranks < 1) throw Error(Errc::usage, "--peers needs -n N with N >= 1");
  if (o.rounds < 1) throw Error(Errc::usage, "--rounds must be >= 1");
  if (o.sizes.empty()) throw Error(Errc::usage, "--peers: no sizes");
  const std::vector<std::string> suite_args = suite_arguments(o);

  std::vector<Contender> contenders;
  const std::vector<std::string> policies =
      o.wait_policies.empty() ? std::vector<std::string>{""} : o.wait_policies;
  for (const std::string& policy : policies) {
    Contender g;
    g.label = policy.empty() ? "grove" : "grove/" + policy;
    g.argv = {o.grove_executable, "run",   "-n",     std::to_string(o.ranks),
              o.grove_executable, "bench", "--algo", o.algorithm};
    g.argv.insert(g.argv.end(), suite_args.begin(), suite_args.end());
    if (o.cpu_time) g.argv.push_back("--cpu-time");
    if (!policy.empty()) g.env = {{"GROVE_WAIT_POLICY", policy}};
    contenders.push_back(std::move(g));
  }
  RunSummary run;
  for (const std::string& name : o.peers) {
    PeerLaunch launch = plan_peer(name, o, suite_args);
    if (launch.status.ran) contenders.push_back(launch.contender);
    run.peers.push_back(launch.status);
  }

  if (!o.background.empty()) {
    std::vector<Contender> both;
    for (const Contender& c : contenders) {
      both.push_back(c);
      Contender loaded = c;
      loaded.label += kLoadedSuffix;
      loaded.background = o.background;
      both.push_back(std::move(loaded));
    }
    contenders = std::move(both);
  }
  const std::string work = make_temp_dir("grove-bench-peers");
  std::vector<std::pair<std::string, std::string>> failures;
  const auto rows =
      run_rounds(contenders, o.rounds, work, job_timeout(o), failures, planned_cells(o));
  for (PeerStatus& p : run.peers) {
    for (const auto& [label, why] : failures) {
      if (label == p.name) {
        p.ran = false;
        p.note = why;
      }
    }
    if (p.ran) {
      const std::string version = peer_version(fmt::format("{}/r1-{}.log", work, p.name));
      if (!version.empty()) p.note = version + "; " + p.note;
    }
  }
  if (!o.keep_logs) {
    std::error_code ignored;
    std::filesystem::remove_all(work, ignored);
  }
  run.cells = tsv::group(rows);
  std::vector<std::string> order;
  for (const Contender& c : contenders)
    order.push_back(c.label);
  run.settings = {
      fmt::format("grove bench --peers {}: {}", join(o.peers, ","), cores_line(o.ranks)),
      fmt::format("{} rounds, interleaved ({}, ...); per round and cell {:.3g} s, warm-up {}, "
                  "{}..{} iterations; samples pooled over rounds",
                  o.rounds, join(order, ", "), round_cell_seconds(o), o.warmup, o.min_iterations,
                  std::max(o.min_iterations, (o.max_iterations + o.rounds - 1) / o.rounds)),
      fmt::format("cadence {}{}: {}", cadence_name(o.cadence), cadence_loop(o.cadence),
                  kMetricsLine),
      fmt::format("grove: blocking collectives, algorithm {}, wait_policy {}, launched by grove "
                  "run -n {} (binds rank r to core r mod cores); blocking auto calls up to "
                  "shm_max_bytes, and from shm_cma_min_bytes (scatter, alltoall: "
                  "shm_cma_min_block_bytes) those with a single-copy form, run "
                  "through the communicator's shared-memory segment",
                  o.algorithm, o.wait_policies.empty() ? "default" : join(o.wait_policies, " / "),
                  o.ranks),
      fmt::format("ratio = grove median / peer median (below 1: grove is faster); 95% CI: "
                  "percentile bootstrap of the ratio of medians, {} resamples, seed = CRC-32 of "
                  "the cell pair",
                  stats::kBootstrapResamples),
  };
  if (!o.background.empty()) {
    run.settings.push_back(fmt::format(
        "background load: each contender also runs as LIBRARY{} right after its quiet job, "
        "beside {}; the load starts before the job and is stopped after it",
        kLoadedSuffix, describe_background(o.background)));
  }
  if (o.keep_logs) run.settings.push_back("logs and per-round TSVs kept in " + work);
  return run;
}

}  // namespace grove::bench
