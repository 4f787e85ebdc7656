// `grove model radix`: the release-radix question (docs/release-radix.md; section
// 8.7.2.10, question 2) answered by its formula and by simulating the
// actual k-ary release at every radix, store and forward and pipelined.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include <fmt/format.h>

#include "campaigns/sim_jobs.hpp"
#include "campaigns/validate.hpp"
#include "command.hpp"
#include "core/params.hpp"
#include "grove/error.hpp"
#include "model/radix.hpp"
#include "model/release.hpp"
#include "usage.hpp"

namespace grove::tools {
namespace {

struct RadixArgs {
  model::ReleaseParams p;
  std::vector<int> ranks = {128, 1024, 10000};
  std::vector<std::string> sizes = {"barrier", "10KB", "100KB", "10MB", "256MB"};
  bool no_sim = false;
  bool sim_all = false;
  std::string segment;    // pipelined release segment; empty: off
  int max_segments = 64;  // caps the segment count (bounds simulation cost)
  std::string pipeline_radices = "2,3,4,5,6,8,12,16,24,32,64";
  std::string curve;  // TSV of T(r) for plots
};

// A barrier's release carries 33 bytes on the wire (docs/fence.md).
uint64_t payload_bytes(const std::string& text) {
  return text == "barrier" ? 33 : params::parse_bytes(text, "--size");
}

std::vector<int> parse_radices(const std::string& text) {
  std::vector<int> out;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    try {
      out.push_back(std::stoi(item));
    } catch (const std::exception&) {
      throw Error(Errc::usage, fmt::format("--pipeline-radices: '{}' is not a radix", item));
    }
    pos = comma + 1;
  }
  return out;
}

sim::SimConfig release_config(const model::ReleaseParams& p) {
  sim::SimConfig c;
  c.model = sim::CostModel::hockney;
  c.data = sim::DataMode::sizes;
  c.alpha_us = p.alpha_us;
  c.copy_us = p.c_us;
  c.threads = p.threads;
  c.bandwidth_gbps = p.bandwidth_gbps;
  c.recv_us = 0;
  c.ranks_per_node = 1;
  c.overlap = true;
  return c;
}

double simulate_release(int n, int r, uint64_t bytes, uint64_t segment,
                        const sim::SimConfig& config) {
  model::JobShape shape;
  shape.collective = "release";
  shape.algorithm = model::ReleaseShape{r, segment}.to_string();
  shape.size = n;
  shape.bytes = bytes;
  return sim::to_micros(model::run_on_sim(model::make_sim_job(shape), config).completion);
}

// A lower bound on the simulated release at radix r: the root's r-th child
// has its copy no earlier than ceil(r/t) c + r M/B + alpha, and the deepest
// rank is `height` hops of at least alpha + c + M/B each. A radix whose
// bound is not below the best simulated time cannot be the optimum.
double release_lower_bound(int n, int r, double bytes, const model::ReleaseParams& p) {
  const int fan = std::min(r, n - 1);
  const double root = std::ceil(static_cast<double>(fan) / p.threads) * p.c_us +
                      fan * bytes * p.us_per_byte() + p.alpha_us;
  const double chain = model::kary_height(n, r) * (p.alpha_us + p.c_us + bytes * p.us_per_byte());
  return std::max(root, chain);
}

struct Cell {
  model::RadixChoice best;
  double t64 = NAN;
  int simulated = 0;
};

std::string cost_range(const std::vector<Cell>& cells) {
  double lo = INFINITY, hi = 0;
  for (const Cell& c : cells) {
    if (std::isnan(c.t64)) continue;
    const double ratio = c.t64 / c.best.time_us;
    lo = std::min(lo, ratio);
    hi = std::max(hi, ratio);
  }
  if (hi == 0) return "-";
  return std::fabs(hi - lo) < 0.005 ? fmt::format("{:.2f}x", lo)
                                    : fmt::format("{:.2f} - {:.2f}x", lo, hi);
}

void print_table(const std::string& title, const RadixArgs& a,
                 const std::map<std::string, std::vector<Cell>>& rows) {
  fmt::print("\n{}\n{:<10}", title, "payload");
  for (int n : a.ranks)
    fmt::print("{:>12}", fmt::format("N = {}", n));
  fmt::print("   cost of r=64\n");
  for (const std::string& size : a.sizes) {
    auto it = rows.find(size);
    if (it == rows.end()) continue;
    fmt::print("{:<10}", size);
    for (const Cell& c : it->second)
      fmt::print("{:>12}", c.best.radix);
    fmt::print("   {}\n", cost_range(it->second));
  }
}

int run_radix(const RadixArgs& a) {
  params::load_process_params();
  if (a.p.threads < 1 || a.p.bandwidth_gbps <= 0 || a.p.alpha_us < 0 || a.p.c_us < 0)
    throw Error(Errc::usage, "--t must be >= 1, --bw > 0, --alpha and --c >= 0");
  for (int n : a.ranks)
    if (n < 2 || n > (1 << 20)) throw Error(Errc::usage, fmt::format("-n {}: need 2..2^20", n));
  const sim::SimConfig config = interpret_options([&] { return release_config(a.p); });
  const uint64_t segment = interpret_options(
      [&] { return a.segment.empty() ? 0 : params::parse_bytes(a.segment, "--segment"); });
  interpret_options([&] {
    for (const std::string& size : a.sizes)
      params::parse_bytes(size, "--size");
  });
  const std::vector<int> pipe_radices = parse_radices(a.pipeline_radices);
  std::FILE* curve = nullptr;
  if (!a.curve.empty()) {
    curve = std::fopen(a.curve.c_str(), "w");
    if (!curve) throw Error(Errc::usage, fmt::format("--curve {}: cannot write", a.curve));
    std::fprintf(
        curve,
        "payload\tbytes\tN\tr\tformula_us\tsim_us\tpipelined_formula_us\tpipelined_sim_us\n");
  }

  fmt::print("release radix: alpha={}us c={}us t={} B={}Gbit/s; M* = B*c/t = {:.0f} B\n",
             a.p.alpha_us, a.p.c_us, a.p.threads, a.p.bandwidth_gbps, a.p.crossover_bytes());
  fmt::print(
      "r* minimises T(r) over r in [2, N-1], smallest on ties; cost of r=64 is "
      "T(64)/T(r*)\n\n");
  fmt::print("payload\tbytes\tN\tmethod\tr_opt\tT_opt_us\tT64_us\tcost64\tsimulated_radices\n");
  std::map<std::string, std::vector<Cell>> formula_rows, sim_rows, pipe_rows, pipe_formula_rows;
  for (const std::string& size : a.sizes) {
    const uint64_t bytes = payload_bytes(size);
    const double m = static_cast<double>(bytes);
    for (int n : a.ranks) {
      auto line = [&](const char* method, const Cell& c) {
        fmt::print("{}\t{}\t{}\t{}\t{}\t{:.3f}\t{:.3f}\t{:.3f}\t{}\n", size, bytes, n, method,
                   c.best.radix, c.best.time_us, c.t64, c.t64 / c.best.time_us, c.simulated);
        std::fflush(stdout);
      };
      Cell formula;
      formula.best =
          model::minimise_radix(n, [&](int r) { return model::seed_release_us(n, r, m, a.p); });
      if (n > 64) formula.t64 = model::seed_release_us(n, 64, m, a.p);
      formula_rows[size].push_back(formula);
      line("formula", formula);

      std::vector<double> sim_curve(static_cast<size_t>(n), NAN);
      std::vector<double> pipe_curve(static_cast<size_t>(n), NAN);
      if (!a.no_sim) {
        Cell simulated;
        simulated.best.time_us = INFINITY;
        auto sim_at = [&](int r) {
          const double t = simulate_release(n, r, bytes, 0, config);
          sim_curve[static_cast<size_t>(r)] = t;
          simulated.simulated++;
          return t;
        };
        for (int r = 2; r <= std::max(2, n - 1); ++r) {
          if (!a.sim_all && release_lower_bound(n, r, m, a.p) >= simulated.best.time_us) continue;
          const double t = sim_at(r);
          if (t < simulated.best.time_us) simulated.best = model::RadixChoice{r, t};
        }
        if (n > 64) {
          simulated.t64 = std::isnan(sim_curve[64]) ? sim_at(64) : sim_curve[64];
        }
        sim_rows[size].push_back(simulated);
        line("sim", simulated);
      }
      // The segment actually used: at least bytes / max_segments.
      const uint64_t seg =
          segment == 0
              ? 0
              : std::max<uint64_t>(segment, (bytes + static_cast<uint64_t>(a.max_segments) - 1) /
                                                static_cast<uint64_t>(a.max_segments));
      if (segment > 0 && bytes > seg) {
        fmt::print("# pipelined {} at N = {}: {} segments of {} B\n", size, n,
                   (bytes + seg - 1) / seg, seg);
        Cell pf;
        pf.best = model::minimise_radix(n, [&](int r) {
          return model::pipelined_release_us(n, r, m, static_cast<double>(seg), a.p);
        });
        if (n > 64) pf.t64 = model::pipelined_release_us(n, 64, m, static_cast<double>(seg), a.p);
        pipe_formula_rows[size].push_back(pf);
        line("pipelined_formula", pf);
        if (!a.no_sim) {
          Cell ps;
          ps.best.time_us = INFINITY;
          for (int r : pipe_radices) {
            if (r < 2 || r > n - 1) continue;
            const double t = simulate_release(n, r, bytes, seg, config);
            pipe_curve[static_cast<size_t>(r)] = t;
            ps.simulated++;
            if (t < ps.best.time_us) ps.best = model::RadixChoice{r, t};
            if (r == 64) ps.t64 = t;
          }
          pipe_rows[size].push_back(ps);
          line("pipelined_sim", ps);
        }
      }
      if (curve) {
        for (int r = 2; r <= std::max(2, n - 1); ++r) {
          const double pipelined =
              seg > 0 ? model::pipelined_release_us(n, r, m, static_cast<double>(seg), a.p) : NAN;
          std::fprintf(curve, "%s\t%llu\t%d\t%d\t%.3f\t%.3f\t%.3f\t%.3f\n", size.c_str(),
                       static_cast<unsigned long long>(bytes), n, r,
                       model::seed_release_us(n, r, m, a.p), sim_curve[static_cast<size_t>(r)],
                       pipelined, pipe_curve[static_cast<size_t>(r)]);
        }
      }
    }
  }
  if (curve) std::fclose(curve);
  print_table("formula (T(r) of docs/release-radix.md, store and forward)", a, formula_rows);
  if (!a.no_sim)
    print_table("simulation (the actual k-ary release, store and forward)", a, sim_rows);
  if (segment > 0) {
    const std::string seg = params::format_bytes(segment);
    print_table(
        fmt::format("pipelined formula [DER], seg={} (at most {} segments)", seg, a.max_segments),
        a, pipe_formula_rows);
    if (!a.no_sim)
      print_table(fmt::format("pipelined simulation, seg={} (at most {} segments), radices {}", seg,
                              a.max_segments, a.pipeline_radices),
                  a, pipe_rows);
  }
  return 0;
}

// The synthetic pLogP table of the checks: g(m) = 2 us + m ns, L = 5 us.
std::shared_ptr<const sim::PlogpTable> check_table() {
  return std::make_shared<sim::PlogpTable>(sim::PlogpTable::from_rows(
      5, {{0, 1, 1, 2}, {1 << 20, 1 + 524.288, 1 + 524.288, 2 + 1048.576}}));
}

struct CheckArgs {
  std::vector<int> ranks = {2, 3, 4, 5, 7, 8, 9, 16, 21, 27, 31, 64, 85};
  std::vector<std::string> sizes = {"1000", "64KiB"};
  std::vector<std::string> only;  // collective names; empty: all
  bool failures_only = false;
};

int run_check(const CheckArgs& a) {
  params::load_process_params();
  for (const std::string& name : a.only) {
    const auto& forms = model::closed_forms();
    if (std::none_of(forms.begin(), forms.end(),
                     [&](const model::ClosedForm& f) { return f.collective == name; })) {
      throw Error(Errc::usage,
                  fmt::format("--coll '{}': no closed form for that collective", name));
    }
  }
  for (int n : a.ranks)
    require_range("-n", n, 1, 1 << 20);
  interpret_options([&] {
    for (const std::string& size : a.sizes)
      params::parse_bytes(size, "--size");
  });
  fmt::print("collective\talgorithm\tP\tbytes\tmodel\tformula_us\tsim_us\tgap\texact\tagrees\n");
  int bad = 0;
  for (const model::ClosedForm& form : model::closed_forms()) {
    if (!form.schedule) continue;  // shm: no schedule for the simulator
    if (!a.only.empty() && std::find(a.only.begin(), a.only.end(), form.collective) == a.only.end())
      continue;
    std::string algorithm = form.name;
    if (form.name == "kary" || form.name == "knomial") algorithm += ":3";
    if (form.name == "pipeline") algorithm += ":seg=4KiB";
    const std::vector<std::string> sizes =
        form.collective == "barrier" ? std::vector<std::string>{"0"} : a.sizes;
    for (const std::string& size : sizes) {
      for (int n : a.ranks) {
        if (form.name == "neighbor_exchange" && n % 2 != 0) continue;
        for (bool plogp : {false, true}) {
          model::PortParams params;
          params.plogp = plogp;
          if (plogp) params.table = check_table();
          const uint64_t bytes = params::parse_bytes(size, "--size");
          const model::Comparison c =
              model::compare_with_sim(form.collective, algorithm, n, bytes, params);
          if (!c.agrees()) ++bad;
          if (a.failures_only && c.agrees()) continue;
          fmt::print("{}\t{}\t{}\t{}\t{}\t{:.3f}\t{:.3f}\t{:+.4f}\t{}\t{}\n", form.collective,
                     algorithm, n, bytes, plogp ? "plogp" : "hockney", c.formula_us, c.sim_us,
                     c.relative_gap(), c.exact ? "exact" : "bound", c.agrees() ? "yes" : "NO");
        }
      }
    }
  }
  fmt::print("# {} disagreements\n", bad);
  return bad == 0 ? 0 : 1;
}

const RegisterCommand model_command{{
    "model",
    "Cost models: the release-radix question (model radix), closed forms vs simulation (model "
    "check)",
    [](CLI::App& sub) -> std::function<int()> {
      sub.require_subcommand(1);
      auto args = std::make_shared<RadixArgs>();
      CLI::App* radix = sub.add_subcommand(
          "radix", "Optimum release radix by the model's formula and by simulation");
      radix->add_option("--alpha", args->p.alpha_us, "Hop latency alpha, us (default 100)");
      radix->add_option("--c", args->p.c_us, "Software cost of one copy, us (default 25)");
      radix->add_option("--t", args->p.threads, "Worker threads sharing copies (default 8)");
      radix->add_option("--bw", args->p.bandwidth_gbps, "Link bandwidth, Gbit/s (default 10)");
      radix->add_option("-n,--ranks", args->ranks, "Rank counts (default 128 1024 10000)");
      radix->add_option("--size", args->sizes,
                        "Payloads: barrier (= 33 B), 10KB, 100KB, 10MB, 256MB (default all)");
      radix->add_flag("--no-sim", args->no_sim, "Formula only");
      radix->add_flag("--sim-all", args->sim_all,
                      "Simulate every radix (default: skip radices whose lower bound exceeds "
                      "the best simulated time; the optimum is the same)");
      radix->add_option("--segment", args->segment,
                        "Also compare a pipelined release with segments of this size");
      radix
          ->add_option("--max-segments", args->max_segments,
                       "Cap on segments: the segment grows to payload/cap (default 64)")
          ->check(CLI::Range(1, 1 << 20));
      radix->add_option("--pipeline-radices", args->pipeline_radices,
                        "Radices simulated for the pipelined release (default "
                        "2,3,4,5,6,8,12,16,24,32,64)");
      radix->add_option("--curve", args->curve, "Write T(r) for every r to this TSV (for plots)");
      auto check_args = std::make_shared<CheckArgs>();
      CLI::App* check = sub.add_subcommand(
          "check", "Every closed form against the simulated schedule on a grid (Hockney, pLogP)");
      check->add_option("-n,--ranks", check_args->ranks, "Rank counts");
      check->add_option("--size", check_args->sizes, "Sizes (block bytes where per rank)");
      check->add_option("--coll", check_args->only, "Only these collectives");
      check->add_flag("--failures", check_args->failures_only, "Print disagreements only");
      return [args, check_args, radix]() {
        return radix->parsed() ? run_radix(*args) : run_check(*check_args);
      };
    },
}};

}  // namespace
}  // namespace grove::tools
