#pragma once
// `grove probe`: measures pLogP between two ranks over the real transport by
// Kielmann, Bal & Verstoep's procedure (docs/tuning.md has the steps and
// where grove departs from the reference benchmark):
//
//   clock overhead   minimum of 5 runs; subtracted from every sample
//   g(0)             flooding: `runs` empty messages back to back, runs
//                    doubling from 10 until the time per message is stable
//                    (1%; 1.5% above 64 KiB) and a round trip is below 1% of
//                    the loop
//   RTT(m), o_s(m)   ping-pong, m bytes out and 0 back; o_s is the time from
//                    posting the send to its local completion
//   o_r(m)           0 bytes out, m back; wait 1.2 RTT(m) so the reply has
//                    arrived, then time posting the receive to its completion
//   g(m)             RTT(m) - RTT(0) + g(0), or flooded at every size
//   gp(m)            the gap of sends posted together: flat releases of 1
//                    and 8 copies, their difference over 7 (below g(m)
//                    where messages in flight together overlap what each
//                    spends alone: a rendezvous's round trip)
//   L                RTT(0) / 2 - g(0)
//   values           the median of the iterations (see Estimate)
//   sizes            0, then 1 B doubling to max_bytes, then on while g stays
//                    sub-linear (up to 8 x max_bytes); a midpoint goes in where
//                    o_s, o_r or g misses the line through the two sizes below
//                    by more than max_diff; then size 0 once more, replacing
//                    the first look if clearly lower (rebase_size_zero)
//   stopping         iterations (each a batch of round trips lasting about
//                    batch_us) until the 90% confidence half-width of RTT is
//                    below 2 eps of its mean, min_iterations..max_iterations;
//                    one warm-up batch discarded at sizes <= 64 KiB
//
// Then flat releases (docs/release-radix.md): r = 1..release_copies copies
// of M bytes sent back to back, acknowledged after the last, at two payloads;
// probe_fit.hpp fits the release model's (alpha, c, B) to them.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "model/probe_link.hpp"
#include "transport/sim/plogp_table.hpp"

namespace grove::model::probe {

// One quantity at one size over the iterations kept, microseconds. The
// table uses the median: one batch preempted on a shared machine moves a
// mean by orders of magnitude (the reference benchmark keeps the mean).
struct Estimate {
  double median = 0;
  double mean = 0;
  double min = 0;
  double ci90 = 0;  // half-width of the 90% confidence interval of the mean
  int iterations = 0;
};

struct SizePoint {
  uint64_t bytes = 0;
  Estimate rtt, os, orecv;
  double g_us = 0;   // flooded, or RTT(m) - RTT(0) + g(0)
  double gp_us = 0;  // the gap of sends posted together
  bool flooded = false;
  bool midpoint = false;  // inserted where the curve bends
};

struct ReleasePoint {
  uint64_t bytes = 0;
  int copies = 0;
  Estimate time;  // first post to the last copy's arrival (the ack's one-way time removed)
};

struct ProbeOptions {
  uint64_t max_bytes = uint64_t{4} << 20;
  bool flood = false;
  double eps = 0.03;
  int min_iterations = 3;
  int max_iterations = 18;
  double max_diff = 0.20;
  int max_midpoints = 16;
  double batch_us = 200;   // target length of one iteration
  int max_batch = 1000;    // round trips per iteration at most
  int release_copies = 8;  // 0: no flat releases
  uint64_t release_small = 64;
  uint64_t release_large = uint64_t{1} << 20;
  // Called before each measured size: the phase ("size", "release"), the
  // bytes, how many of `total` planned steps are done.
  std::function<void(const std::string& phase, uint64_t bytes, int done, int total)> progress;

  // Throws grove::Error(usage) naming the option out of range.
  void validate() const;
};

// What the second look at size 0 did: not taken yet; kept the first (not
// clearly lower); replaced it (clearly lower: a slow start); kept it
// because it was under half (the machine changed speed between the looks).
enum class ZeroRecheck { not_taken, kept, replaced, speed_changed };

struct ProbeResult {
  double clock_overhead_us = 0;
  double g0_us = 0;  // by flooding
  int g0_runs = 0;   // messages in the flood that settled it
  double latency_us = 0;
  bool latency_clamped = false;  // RTT(0)/2 < g(0): L set to 0
  // The second look at size 0 (rebase_size_zero): what it did, and the
  // RTT(0) of each look once it was taken.
  ZeroRecheck zero_recheck = ZeroRecheck::not_taken;
  double first_rtt0_us = 0;
  double second_rtt0_us = 0;
  std::vector<SizePoint> sizes;  // increasing
  std::vector<ReleasePoint> release;
  // Host terms (docs/tuning.md), measured through grove's calls rather than
  // the transport (tools/probe.cpp); 0 / empty when not measured.
  double call_us = 0;   // a flat 1 B gather's median at N = 2 less its form
  double shm_us = 0;    // the shared-memory 1 B gather's median at N = 2 less its copies
  sim::CopyCurve copy;  // (bytes, us) of one memcpy within a process
  sim::CopyCurve copy_in, copy_out, copy_cma;  // between two ranks (sim::CopyKind)
  std::string host_terms_note;                 // how they were measured, or why not

  // Medians of o_s, o_r per size, g and L; negative derived values (noise at
  // small sizes) become 0; the host terms as measured.
  sim::PlogpTable table() const;
};

// The size-0 point as measured: g_us is g(0) by flooding, settled after
// g0_runs messages.
struct ZeroPoint {
  SizePoint point;
  int g0_runs = 0;
};

// The procedure's second look at size 0, recorded in zero_recheck and both
// looks' RTT(0): when its RTT median is below the first's by more than 2 eps
// of it and either's 90% half-width, but not below half of it (that is the
// machine changing speed, not a slow start: the sizes between belong to the
// first), it replaces the size-0 point, g(0), L and every g(m) derived from
// RTT(0) (flooded ones stay) and returns true; otherwise the table is kept. Posted gaps measured
// before keep the acknowledgement time of the first look (a release's ack is one L + g(0); the
// difference is below the margin). Throws grove::Error(internal) without a size-0 point.
bool rebase_size_zero(ProbeResult& result, const ZeroPoint& again, double eps);

// Runs the procedure from the measuring end; the peer runs a Responder.
// Throws grove::Error (timeout, peer_failed, usage) naming the step.
ProbeResult run_probe(Link& link, const ProbeOptions& options);
// Tells the peer's Responder to stop.
void stop_peer(Link& link);

// Median, mean, minimum and 90% confidence half-width of the mean
// (Student's t) of `samples`.
Estimate estimate(const std::vector<double>& samples);

}  // namespace grove::model::probe
