// `grove probe --out FILE`: measures pLogP between two ranks of the job
// over its transport (model/probe.hpp) and writes the table `grove sim
// --plogp`, `grove tune` and `grove explain` read. Run it under a launcher:
//
//   grove run -n 2 grove probe --out plogp.txt [--plot plogp.png]
//
// Pairs: rank 0 and the lowest other rank on its host (intra-host), and,
// when the job spans hosts, rank 0 and the lowest rank on another host
// (inter-host). FILE gets the inter-host table when there is one (what a
// collective across hosts pays), else the intra-host one; the other pair's
// table goes to FILE.intra-host. Ranks outside the pair being measured wait
// without spinning.

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "api/comm_state.hpp"
#include "command.hpp"
#include "core/params.hpp"
#include "grove/error.hpp"
#include "grove/session.hpp"
#include "model/cost.hpp"
#include "model/probe.hpp"
#include "model/probe_fit.hpp"
#include "suite/subprocess.hpp"
#include "transport/sim/plogp_table.hpp"
#include "tuning/host_terms.hpp"

namespace grove::tools {
namespace {

struct ProbeArgs {
  std::string out;
  std::string plot;
  std::string max_size = "4MiB";
  bool flood = false;
  int release_copies = 8;
  double eps = 0.03;
  int min_iterations = 3;
  int max_iterations = 18;
};

struct Pair {
  int peer = 1;
  std::string kind;
  std::string hosts;
  std::string file;
  std::string plot;
};

std::string insert_suffix(const std::string& path, const std::string& suffix) {
  const std::filesystem::path p(path);
  return (p.parent_path() / (p.stem().string() + suffix + p.extension().string())).string();
}

std::vector<Pair> choose_pairs(const Hosts& hosts, const ProbeArgs& args) {
  std::vector<Pair> pairs;
  const int home = hosts.of_rank.at(0);
  for (int r : hosts.ranks_on(home)) {
    if (r == 0) continue;
    pairs.push_back({r, "intra-host", hosts.names.at(static_cast<size_t>(home)), "", ""});
    break;
  }
  for (int h = 0; h < hosts.count(); ++h) {
    if (h == home) continue;
    const int r = hosts.ranks_on(h).front();
    pairs.insert(pairs.begin(), {r, "inter-host",
                                 fmt::format("{} - {}", hosts.names.at(static_cast<size_t>(home)),
                                             hosts.names.at(static_cast<size_t>(h))),
                                 "", ""});
    break;
  }
  // The first pair is the main one (inter-host when there is one).
  for (size_t i = 0; i < pairs.size(); ++i) {
    pairs[i].file = i == 0 ? args.out : args.out + ".intra-host";
    if (!args.plot.empty())
      pairs[i].plot = i == 0 ? args.plot : insert_suffix(args.plot, "-intra-host");
  }
  return pairs;
}

void write_plot(const std::string& path, const model::probe::ProbeResult& result,
                const std::string& title) {
  const std::string gnuplot = bench::find_in_path("gnuplot");
  if (gnuplot.empty()) {
    throw Error(Errc::usage, "--plot needs gnuplot (scripts/deps.sh installs gnuplot-nox)");
  }
  const std::string work = bench::make_temp_dir("grove-probe-plot");
  const std::string data = work + "/probe.dat";
  const std::string script = work + "/probe.gp";
  std::ofstream(data) << model::probe::plot_data(result);
  std::ofstream gp(script);
  gp << (path.ends_with(".png") ? "set terminal pngcairo size 960,600 font 'sans,10'\n"
                                : "set terminal svg size 960,600 dynamic font 'sans,10' "
                                  "background rgb 'white'\n");
  gp << "set output '" << path << "'\nset title '" << title << "'\n"
     << "set logscale xy\nset format x '%.0s%cB'\nset xlabel 'message size'\n"
     << "set ylabel 'microseconds'\nset key left top\nset grid\n"
     << "plot '" << data
     << "' using 1:4 with linespoints pointtype 7 pointsize 0.5 title 'g(m)', \\\n"
     << "     '" << data
     << "' using 1:2 with linespoints pointtype 5 pointsize 0.5 title 'o_s(m)', \\\n"
     << "     '" << data
     << "' using 1:3 with linespoints pointtype 9 pointsize 0.5 title 'o_r(m)', \\\n"
     << "     '" << data << "' using 1:5 with lines dashtype 2 title 'RTT(m)'\n";
  gp.close();
  const bench::ProcessResult r = bench::run_process({gnuplot, script}, {}, script + ".log", 60);
  if (r.exit_code != 0 || r.timed_out) {
    throw Error(Errc::usage,
                fmt::format("gnuplot failed on {} (script {}):\n{}", path, script, r.tail()));
  }
  std::error_code ignored;
  std::filesystem::remove_all(work, ignored);
}

// The host terms into `result`: call_us is the flat gather's median less its
// pLogP form at N = 2, 1 B (g(1) + L of this pair's table).
void add_host_terms(model::probe::ProbeResult& result, const tuning::HostMeasures& host,
                    int terms_peer) {
  const sim::PlogpTable plain = result.table();
  const double form_us = model::predict_us("gather", "flat", 2, 1, model::plogp_model(plain));
  result.call_us = std::max(0.0, host.schedule_gather_us - form_us);
  result.shm_us = std::max(0.0, host.shm_gather_us);
  result.copy = host.copy;
  result.copy_in = host.cross.in;
  result.copy_out = host.cross.out;
  result.copy_cma = host.cross.cma;
  std::string shm_note = "no shm terms: " + host.shm_missing;
  if (host.shm_gather_us > 0) {
    shm_note = fmt::format(
        "64 B shm gather less its copies {:.4f} us; memcpy 1 B .. 4 MiB on rank 0; copies "
        "between ranks 0 and {}: copy_in (rank 0 into a shared buffer), copy_out (the other out "
        "of it), copy_cma (the other reads rank 0's buffer){}",
        host.shm_gather_us, terms_peer,
        host.cross.missing.empty() ? "" : " (" + host.cross.missing + ")");
  }
  result.host_terms_note = fmt::format(
      "ranks 0-{} through grove's calls: 1 B flat gather {:.4f} us less its form {:.4f} us; {}",
      terms_peer, host.schedule_gather_us, form_us, shm_note);
}

int run_probe_command(const ProbeArgs& args) {
  if (args.out.empty()) throw Error(Errc::usage, "grove probe: --out FILE is required");
  if (!args.plot.empty() && !args.plot.ends_with(".png") && !args.plot.ends_with(".svg")) {
    throw Error(Errc::usage,
                fmt::format("--plot '{}': the file must end in .svg or .png", args.plot));
  }
  model::probe::ProbeOptions options;
  options.max_bytes = params::parse_bytes(args.max_size, "--max-size");
  options.flood = args.flood;
  options.release_copies = args.release_copies;
  options.eps = args.eps;
  options.min_iterations = args.min_iterations;
  options.max_iterations = args.max_iterations;
  options.validate();

  Session session;
  if (session.size() < 2) {
    throw Error(Errc::usage,
                fmt::format("grove probe needs two ranks (this job has {}): run it as `grove run "
                            "-n 2 grove probe --out {}`",
                            session.size(), args.out));
  }
  detail::SessionState& state = session.state();
  const std::vector<Pair> pairs = choose_pairs(state.bootstrap->hosts(), args);
  // The probe's own context id: no communicator's message can match its tags.
  Comm probe_comm = session.world().dup();
  detail::CommState& comm = probe_comm.state();
  const auto timeout =
      std::chrono::milliseconds(params::Registry::global().get("timeout_ms").as_int);
  const int rank = session.rank();
  const bool leader = rank == 0;
  const bool terminal = leader && isatty(STDERR_FILENO);

  // Host terms on rank 0 and its host's peer (or the one pair there is).
  const int terms_peer = pairs.back().peer;
  const bool in_terms_pair = rank == 0 || rank == terms_peer;
  Comm terms_comm = probe_comm.split(in_terms_pair ? 0 : 1, rank);
  tuning::HostMeasures host;
  if (in_terms_pair) {
    if (terminal)
      fmt::print(stderr, "probe ranks 0-{}: host terms (call, shm, copies)\n", terms_peer);
    host = tuning::measure_host_terms(terms_comm);
  }

  for (const Pair& pair : pairs) {
    if (leader) {
      auto progress = [&](const std::string& phase, uint64_t bytes, int done, int total) {
        if (!terminal) return;
        fmt::print(stderr, "\rprobe ranks 0-{} ({}): {} {} B, step {}/{}      ", pair.peer,
                   pair.kind, phase, bytes, done + 1, total);
      };
      options.progress = progress;
      model::probe::Link link(*comm.transport, pair.peer, comm.context, {}, timeout);
      model::probe::ProbeResult result = model::probe::run_probe(link, options);
      add_host_terms(result, host, terms_peer);
      model::probe::stop_peer(link);
      if (terminal) fmt::print(stderr, "\n");
      const sim::PlogpTable table = result.table();
      const model::probe::HockneyFit hockney = model::probe::fit_hockney(table);
      const model::probe::ReleaseFit release = model::probe::fit_release(result);
      const model::probe::PairInfo info{0, pair.peer, pair.kind, pair.hosts,
                                        comm.transport->name()};
      std::ofstream out(pair.file);
      out << model::probe::table_text(result, info, hockney, release);
      out.close();
      if (!out) throw Error(Errc::usage, fmt::format("grove probe: cannot write {}", pair.file));
      fmt::print("ranks 0-{} ({}, {}): L {:.3f} us, g(0) {:.3f} us, {} sizes to {} B\n", pair.peer,
                 pair.kind, pair.hosts, result.latency_us, result.g0_us, result.sizes.size(),
                 result.sizes.back().bytes);
      fmt::print("  Hockney: alpha {:.3f} us, beta {:.6g} us/B ({:.3f} Gbit/s)\n", hockney.alpha_us,
                 hockney.beta_us_per_byte, hockney.bandwidth_gbps());
      if (release.valid) {
        fmt::print("  release: alpha {:.3f} us, c {:.3f} us, B {:.3f} Gbit/s, t 1\n",
                   release.alpha_us, release.c_us, release.bandwidth_gbps);
      } else {
        fmt::print("  release fit: none ({})\n", release.why);
      }
      fmt::print("  wrote {}\n", pair.file);
      if (!pair.plot.empty()) {
        write_plot(pair.plot, result,
                   fmt::format("pLogP, ranks 0-{} ({}, {})", pair.peer, pair.kind, pair.hosts));
        fmt::print("  plot {}\n", pair.plot);
      }
    } else if (rank == pair.peer) {
      model::probe::Responder responder(*comm.transport, 0, comm.context);
      responder.serve(timeout);
    }
    // Ranks outside the pair sleep through the measurement, however long.
    params::ScopedSet sleep("wait_policy", "block");
    params::ScopedSet patient("timeout_ms", "86400000");
    probe_comm.barrier();
  }
  return 0;
}

const RegisterCommand probe_command{{
    "probe",
    "Measure pLogP between two ranks (run under grove run -n 2) and write the table",
    [](CLI::App& sub) -> std::function<int()> {
      auto args = std::make_shared<ProbeArgs>();
      sub.add_option("--out", args->out, "The pLogP table to write (grove sim/tune --plogp)");
      sub.add_option("--plot", args->plot, "Plot g(m), o_s(m), o_r(m) (FILE.png or FILE.svg)");
      sub.add_option("--max-size", args->max_size, "Largest size (then on while g is sub-linear)")
          ->capture_default_str();
      sub.add_flag("--flood", args->flood, "Measure g(m) by flooding at every size");
      sub.add_option("--release-copies", args->release_copies,
                     "Flat releases of 1..N copies for the release fit (0: none)")
          ->capture_default_str();
      sub.add_option("--eps", args->eps, "Stop when the 90% CI half-width is below 2 eps")
          ->capture_default_str();
      sub.add_option("--min-its", args->min_iterations, "Fewest iterations per size")
          ->capture_default_str();
      sub.add_option("--max-its", args->max_iterations, "Most iterations per size")
          ->capture_default_str();
      return [args] { return run_probe_command(*args); };
    },
}};

}  // namespace
}  // namespace grove::tools
