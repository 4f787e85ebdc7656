#include "model/probe_fit.hpp"

#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "grove/error.hpp"
#include "model/probe_steps.hpp"

namespace grove::model::probe {
namespace {

struct Line {
  double intercept = 0;
  double slope = 0;
};

// Weighted least squares of y = a + b x.
Line fit_line(const std::vector<double>& x, const std::vector<double>& y,
              const std::vector<double>& w) {
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sw += w[i];
    sx += w[i] * x[i];
    sy += w[i] * y[i];
    sxx += w[i] * x[i] * x[i];
    sxy += w[i] * x[i] * y[i];
  }
  const double det = sw * sxx - sx * sx;
  if (det == 0) return {sw > 0 ? sy / sw : 0, 0};
  return {(sxx * sy - sx * sxy) / det, (sw * sxy - sx * sy) / det};
}

}  // namespace

HockneyFit fit_hockney(const sim::PlogpTable& table) {
  std::vector<double> x, y, w;
  for (const sim::PlogpTable::Row& r : table.rows()) {
    const double t = table.latency_us() + r.g_us;
    if (t <= 0) continue;
    x.push_back(r.bytes);
    y.push_back(t);
    w.push_back(1 / (t * t));  // relative error
  }
  if (x.size() < 2) {
    throw Error(Errc::invalid_argument, "Hockney fit: needs two sizes with a positive time");
  }
  const Line line = fit_line(x, y, w);
  HockneyFit fit{line.intercept, line.slope};
  for (size_t i = 0; i < x.size(); ++i) {
    const double rel = std::abs(fit.alpha_us + fit.beta_us_per_byte * x[i] - y[i]) / y[i];
    if (rel > fit.worst_relative) {
      fit.worst_relative = rel;
      fit.worst_bytes = static_cast<uint64_t>(x[i]);
    }
  }
  return fit;
}

ReleaseFit fit_release(const ProbeResult& result) {
  ReleaseFit fit;
  if (result.release.empty()) {
    fit.why = "no flat releases measured";
    return fit;
  }
  // One line in r per payload.
  std::vector<uint64_t> payloads;
  for (const ReleasePoint& p : result.release)
    if (payloads.empty() || payloads.back() != p.bytes) payloads.push_back(p.bytes);
  if (payloads.size() != 2) {
    fit.why = "needs flat releases at exactly two payloads";
    return fit;
  }
  Line lines[2];
  for (int k = 0; k < 2; ++k) {
    std::vector<double> x, y, w;
    for (const ReleasePoint& p : result.release) {
      if (p.bytes != payloads[static_cast<size_t>(k)]) continue;
      x.push_back(p.copies);
      y.push_back(p.time.median);
      w.push_back(1);
    }
    lines[k] = fit_line(x, y, w);
  }
  const double small = static_cast<double>(payloads[0]);
  const double large = static_cast<double>(payloads[1]);
  const double slope_gap = lines[1].slope - lines[0].slope;
  if (!(slope_gap > 0)) {
    fit.why = fmt::format(
        "the per-copy cost does not grow with the payload ({:.3f} us at {} B, "
        "{:.3f} us at {} B)",
        lines[0].slope, payloads[0], lines[1].slope, payloads[1]);
    return fit;
  }
  const double us_per_byte = slope_gap / (large - small);
  fit.valid = true;
  fit.bandwidth_gbps = 8e-3 / us_per_byte;
  fit.c_us = std::max(0.0, lines[0].slope - small * us_per_byte);
  fit.alpha_us = std::max(0.0, (lines[0].intercept + lines[1].intercept) / 2);
  return fit;
}

std::string table_text(const ProbeResult& result, const PairInfo& pair, const HockneyFit& hockney,
                       const ReleaseFit& release) {
  std::string out;
  out += fmt::format("# grove probe: pLogP between ranks {} and {} ({}, {}), transport {}\n",
                     pair.measurer, pair.peer, pair.kind, pair.hosts, pair.transport);
  out += "# procedure: Kielmann, Bal & Verstoep 2000 (docs/tuning.md); times in microseconds\n";
  out += fmt::format("# clock overhead {:.4f} us; g(0) by flooding {:.4f} us ({} messages)\n",
                     result.clock_overhead_us, result.g0_us, result.g0_runs);
  out += fmt::format("# L = RTT(0)/2 - g(0) = {:.4f} us{}\n", result.latency_us,
                     result.latency_clamped ? " (RTT(0)/2 was below g(0): set to 0)" : "");
  if (result.zero_recheck == ZeroRecheck::replaced) {
    out += fmt::format(
        "# size 0 measured twice: RTT(0) {:.4f} us at the end replaced {:.4f} us at the start\n",
        result.second_rtt0_us, result.first_rtt0_us);
  } else if (result.zero_recheck == ZeroRecheck::speed_changed) {
    out += fmt::format(
        "# size 0 measured twice: RTT(0) {:.4f} us at the start, {:.4f} us at the end, kept: "
        "under half, the machine changed speed during the probe\n",
        result.first_rtt0_us, result.second_rtt0_us);
  }
  out += fmt::format(
      "# Hockney fit to L + g(m): alpha {:.4f} us, beta {:.6g} us/B ({:.3f} Gbit/s), worst "
      "{:.0f}% at {} B\n",
      hockney.alpha_us, hockney.beta_us_per_byte, hockney.bandwidth_gbps(),
      100 * hockney.worst_relative, hockney.worst_bytes);
  if (release.valid) {
    out += fmt::format(
        "# release fit (flat releases, docs/release-radix.md): alpha {:.4f} us, c {:.4f} us, "
        "B {:.3f} Gbit/s, t 1\n#   grove model radix --alpha {:.4f} --c {:.4f} --t 1 --bw "
        "{:.3f}\n",
        release.alpha_us, release.c_us, release.bandwidth_gbps, release.alpha_us, release.c_us,
        release.bandwidth_gbps);
  } else {
    out += fmt::format("# release fit: none ({})\n", release.why);
  }
  for (const ReleasePoint& p : result.release) {
    out +=
        fmt::format("#   release {} B x {}: median {:.4f} us (mean {:.4f} +-{:.4f}, {} its)\n",
                    p.bytes, p.copies, p.time.median, p.time.mean, p.time.ci90, p.time.iterations);
  }
  out += "format grove-plogp/1\n";
  out += fmt::format("L {:.6f}\n", result.latency_us);
  out += "bytes os_us or_us g_us\n";
  const sim::PlogpTable table = result.table();
  for (size_t i = 0; i < result.sizes.size(); ++i) {
    const SizePoint& p = result.sizes[i];
    const sim::PlogpTable::Row& r = table.rows()[i];
    out += fmt::format(
        "{} {:.6f} {:.6f} {:.6f}  # rtt median {:.4f} (mean {:.4f} +-{:.4f}, min {:.4f}, {} "
        "its){}{}\n",
        p.bytes, r.os_us, r.or_us, r.g_us, p.rtt.median, p.rtt.mean, p.rtt.ci90, p.rtt.min,
        p.rtt.iterations, p.flooded ? ", g flooded" : "", p.midpoint ? ", midpoint" : "");
  }
  out +=
      fmt::format("# gp(m), the gap of sends posted together (flat releases of 1 and {} copies)\n",
                  kPostedCopies);
  for (const auto& [bytes, us] : table.posted_gap())
    out += fmt::format("gap_posted {} {:.6f}\n", bytes, us);
  if (pair.kind == "inter-host") {
    // Not measured (the probe has one peer): a host's NIC serves its
    // connections to different hosts at once, so a rank's sends posted
    // together share it (coll/cost_terms.hpp).
    out += "# sends posted together to different hosts share this host's port (not measured)\n";
    out += "port shared\n";
  }
  if (!result.host_terms_note.empty()) out += "# host terms: " + result.host_terms_note + "\n";
  if (result.call_us > 0) out += fmt::format("call_us {:.6f}\n", result.call_us);
  if (result.shm_us > 0) out += fmt::format("shm_us {:.6f}\n", result.shm_us);
  const sim::CopyCurve* curves[] = {&result.copy, &result.copy_in, &result.copy_out,
                                    &result.copy_cma};
  for (sim::CopyKind kind : sim::kCopyKinds) {
    for (const auto& [bytes, us] : *curves[static_cast<size_t>(kind)])
      out += fmt::format("{} {} {:.6f}\n", sim::copy_keyword(kind), bytes, us);
  }
  out += "end\n";
  return out;
}

std::string plot_data(const ProbeResult& result) {
  std::string out = "# bytes os_us or_us g_us rtt_us\n";
  for (const SizePoint& p : result.sizes) {
    if (p.bytes == 0) continue;
    out += fmt::format("{} {:.6f} {:.6f} {:.6f} {:.6f}\n", p.bytes, p.os.median, p.orecv.median,
                       p.g_us, p.rtt.median);
  }
  return out;
}

}  // namespace grove::model::probe
