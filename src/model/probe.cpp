#include "model/probe.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "grove/error.hpp"
#include "model/probe_steps.hpp"

namespace grove::model::probe {
namespace {

// Student's t at 95% (one-sided), i.e. the 90% two-sided interval, by
// degrees of freedom 1..30; the normal quantile beyond.
double t90(int dof) {
  static constexpr double kT[] = {6.314, 2.920, 2.353, 2.132, 2.015, 1.943, 1.895, 1.860,
                                  1.833, 1.812, 1.796, 1.782, 1.771, 1.761, 1.753, 1.746,
                                  1.740, 1.734, 1.729, 1.725, 1.721, 1.717, 1.714, 1.711,
                                  1.708, 1.706, 1.703, 1.701, 1.699, 1.697};
  if (dof < 1) return 0;
  return dof <= 30 ? kT[dof - 1] : 1.645;
}

// The value at `x` of the line through (a, fa) and (b, fb).
double extrapolate(double a, double fa, double b, double fb, double x) {
  return fb + (fb - fa) * (x - b) / (b - a);
}

// L = RTT(0) / 2 - g(0), clamped at 0.
void set_latency(ProbeResult& r) {
  r.latency_us = r.sizes.empty() ? 0 : r.sizes.front().rtt.median / 2 - r.g0_us;
  r.latency_clamped = r.latency_us < 0;
  if (r.latency_clamped) r.latency_us = 0;
}

class Procedure {
 public:
  Procedure(Link& link, const ProbeOptions& options) : link_(link), options_(options) {}

  ProbeResult run() {
    result_.clock_overhead_us = clock_overhead(link_);
    planned_ = 3;  // the clock, size 0 and its second look
    for (uint64_t s = 1; s <= options_.max_bytes; s *= 2)
      ++planned_;
    // Size 0 first: RTT(0) and g(0) anchor every derived g(m).
    report("size", 0);
    set_size_zero(measure_zero());

    const uint64_t beyond = options_.max_bytes * 8;
    for (uint64_t s = 1; s <= beyond; s *= 2) {
      if (s > options_.max_bytes && !sub_linear()) break;
      report("size", s);
      add(measure(s, false));
      maybe_midpoint();
    }
    // Size 0 again: a transient at the start (the peer's first wake-ups,
    // the machine changing speed) inflates RTT(0) and with it L and every
    // derived g(m); a second look that is clearly lower replaces it.
    report("size", 0);
    rebase_size_zero(result_, measure_zero(), options_.eps);
    if (options_.release_copies > 0) release();
    return result_;
  }

 private:
  double overhead() const { return result_.clock_overhead_us; }
  // RTT(0), which anchors every derived g(m): the size-0 point's (sizes
  // stay in increasing order, so it is the first).
  double rtt0() const { return result_.sizes.front().rtt.median; }

  // The whole size-0 point: ping-pong, g(0) by flooding, o_r, posted gap.
  ZeroPoint measure_zero() {
    const PingPong zero = ping_pong(link_, 0, 0, overhead(), options_);
    const Flood g0 = flood(link_, 0, zero.rtt.median, overhead());
    ZeroPoint z;
    z.g0_runs = g0.runs;
    z.point = SizePoint{.bytes = 0, .rtt = zero.rtt, .os = zero.os};
    z.point.orecv = receive_overhead(link_, 0, zero.rtt.median, overhead(), options_);
    z.point.g_us = g0.per_message_us;
    z.point.flooded = true;
    z.point.gp_us = posted_gap(link_, 0, ack_one_way(), overhead(), options_);
    return z;
  }

  void set_size_zero(const ZeroPoint& z) {
    result_.g0_us = z.point.g_us;
    result_.g0_runs = z.g0_runs;
    result_.sizes.push_back(z.point);
    set_latency(result_);
  }

  void report(const char* phase, uint64_t bytes) {
    if (options_.progress) options_.progress(phase, bytes, done_, std::max(planned_, done_ + 1));
    ++done_;
  }

  SizePoint measure(uint64_t bytes, bool midpoint) {
    const double hint = result_.sizes.back().rtt.median;
    const PingPong pp = ping_pong(link_, bytes, hint, overhead(), options_);
    SizePoint p{.bytes = bytes, .rtt = pp.rtt, .os = pp.os};
    p.orecv = receive_overhead(link_, bytes, pp.rtt.median, overhead(), options_);
    if (options_.flood) {
      p.g_us = flood(link_, bytes, rtt0(), overhead()).per_message_us;
      p.flooded = true;
    } else {
      p.g_us = pp.rtt.median - rtt0() + result_.g0_us;
    }
    p.gp_us = posted_gap(link_, bytes, ack_one_way(), overhead(), options_);
    p.midpoint = midpoint;
    return p;
  }

  // A release's acknowledgement: one empty message back.
  double ack_one_way() const { return result_.latency_us + result_.g0_us; }

  void add(const SizePoint& p) {
    auto at = std::lower_bound(result_.sizes.begin(), result_.sizes.end(), p.bytes,
                               [](const SizePoint& q, uint64_t b) { return q.bytes < b; });
    result_.sizes.insert(at, p);
  }

  // g still grows slower than the size: keep doubling past max_bytes.
  bool sub_linear() const {
    const size_t n = result_.sizes.size();
    if (n < 2) return true;
    const SizePoint& a = result_.sizes[n - 2];
    const SizePoint& b = result_.sizes[n - 1];
    if (a.bytes == 0 || a.g_us <= 0) return true;
    const double growth = (b.g_us / a.g_us) / (static_cast<double>(b.bytes) / a.bytes);
    return growth < 0.9;
  }

  // Where o_s, o_r or g at the newest doubling size misses the line through
  // the two sizes below it by more than max_diff, measure halfway.
  void maybe_midpoint() {
    const size_t n = result_.sizes.size();
    if (n < 3 || midpoints_ >= options_.max_midpoints) return;
    const SizePoint& a = result_.sizes[n - 3];
    const SizePoint& b = result_.sizes[n - 2];
    const SizePoint& c = result_.sizes[n - 1];
    const double gap = static_cast<double>(c.bytes - b.bytes);
    if (gap <= std::max(32.0, options_.eps * static_cast<double>(c.bytes))) return;
    const double floor_us = std::max(2 * overhead(), 0.02);
    auto misses = [&](double fa, double fb, double fc) {
      const double line =
          extrapolate(static_cast<double>(a.bytes), fa, static_cast<double>(b.bytes), fb,
                      static_cast<double>(c.bytes));
      const double off = std::abs(fc - line);
      return off > floor_us && off > options_.max_diff * std::max(std::abs(fc), std::abs(line));
    };
    if (!misses(a.os.median, b.os.median, c.os.median) &&
        !misses(a.orecv.median, b.orecv.median, c.orecv.median) &&
        !misses(a.g_us, b.g_us, c.g_us)) {
      return;
    }
    const uint64_t mid = b.bytes + (c.bytes - b.bytes) / 2;
    ++midpoints_;
    ++planned_;
    report("midpoint", mid);
    add(measure(mid, true));
  }

  void release() {
    const double ack = ack_one_way();
    for (uint64_t bytes : {options_.release_small, options_.release_large}) {
      for (int r = 1; r <= options_.release_copies; ++r) {
        ++planned_;
        report("release", bytes);
        result_.release.push_back(
            {bytes, r, flat_release(link_, bytes, r, ack, overhead(), options_)});
      }
    }
  }

  Link& link_;
  const ProbeOptions& options_;
  ProbeResult result_;
  int midpoints_ = 0;
  int planned_ = 0;
  int done_ = 0;
};

}  // namespace

void ProbeOptions::validate() const {
  auto bad = [](const std::string& what) { throw Error(Errc::usage, "grove probe: " + what); };
  if (max_bytes < 1 || max_bytes > kMaxBytes / 8)
    bad(fmt::format("--max-size must be 1 B .. {} B", kMaxBytes / 8));
  if (!(eps > 0 && eps < 1)) bad("eps must be in (0, 1)");
  if (min_iterations < 2 || max_iterations < min_iterations)
    bad("iterations: need 2 <= min <= max");
  if (!(max_diff > 0)) bad("max_diff must be > 0");
  if (!(batch_us > 0) || max_batch < 1) bad("batch length must be > 0");
  if (release_copies < 0 || release_copies > 64) bad("--release-copies must be 0..64");
  if (release_copies > 0 && (release_small >= release_large || release_large > kMaxBytes / 8)) {
    bad("release payloads: need small < large <= max");
  }
}

sim::PlogpTable ProbeResult::table() const {
  std::vector<sim::PlogpTable::Row> rows;
  for (const SizePoint& p : sizes) {
    rows.push_back({static_cast<double>(p.bytes), std::max(0.0, p.os.median),
                    std::max(0.0, p.orecv.median), std::max(0.0, p.g_us)});
  }
  sim::PlogpTable table = sim::PlogpTable::from_rows(latency_us, std::move(rows));
  sim::Curve posted;
  for (const SizePoint& p : sizes)
    posted.emplace_back(static_cast<double>(p.bytes), std::max(0.0, p.gp_us));
  table.set_posted_gap(std::move(posted));
  table.set_host_terms(call_us, shm_us, copy);
  table.set_copy_curve(sim::CopyKind::in, copy_in);
  table.set_copy_curve(sim::CopyKind::out, copy_out);
  table.set_copy_curve(sim::CopyKind::cma, copy_cma);
  return table;
}

bool rebase_size_zero(ProbeResult& result, const ZeroPoint& again, double eps) {
  if (result.sizes.empty() || result.sizes.front().bytes != 0)
    throw Error(Errc::internal, "probe: rebase_size_zero needs the size-0 point first");
  const Estimate& first = result.sizes.front().rtt;
  result.first_rtt0_us = first.median;
  result.second_rtt0_us = again.point.rtt.median;
  const double margin = std::max({2 * eps * first.median, first.ci90, again.point.rtt.ci90});
  if (!(again.point.rtt.median < first.median - margin)) {
    result.zero_recheck = ZeroRecheck::kept;
    return false;
  }
  // Less than half: not a slow start but the machine changing speed
  // between the looks (docs/tuning.md), and every size measured in between
  // belongs to the first look's speed.
  if (again.point.rtt.median < first.median / 2) {
    result.zero_recheck = ZeroRecheck::speed_changed;
    return false;
  }
  result.zero_recheck = ZeroRecheck::replaced;
  result.sizes.front() = again.point;
  result.g0_us = again.point.g_us;
  result.g0_runs = again.g0_runs;
  set_latency(result);
  const double rtt0 = again.point.rtt.median;
  for (SizePoint& p : result.sizes) {
    if (!p.flooded) p.g_us = p.rtt.median - rtt0 + result.g0_us;
  }
  return true;
}

ProbeResult run_probe(Link& link, const ProbeOptions& options) {
  options.validate();
  return Procedure(link, options).run();
}

void stop_peer(Link& link) {
  Command stop;
  stop.op = Command::Op::stop;
  link.command(stop);
}

Estimate estimate(const std::vector<double>& samples) {
  Estimate e;
  e.iterations = static_cast<int>(samples.size());
  if (samples.empty()) return e;
  double sum = 0;
  e.min = samples.front();
  for (double s : samples) {
    sum += s;
    e.min = std::min(e.min, s);
  }
  const double n = static_cast<double>(samples.size());
  e.mean = sum / n;
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  const size_t half = sorted.size() / 2;
  e.median = sorted.size() % 2 == 1 ? sorted[half] : (sorted[half - 1] + sorted[half]) / 2;
  if (samples.size() > 1) {
    double sq = 0;
    for (double s : samples)
      sq += (s - e.mean) * (s - e.mean);
    e.ci90 = t90(e.iterations - 1) * std::sqrt(sq / (n - 1)) / std::sqrt(n);
  }
  return e;
}

}  // namespace grove::model::probe
