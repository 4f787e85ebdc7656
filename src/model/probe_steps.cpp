#include "model/probe_steps.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace grove::model::probe {
namespace {

constexpr uint64_t kWarmupMaxBytes = 64 * 1024;

// Round trips per iteration so that one lasts about batch_us.
uint64_t batch_size(double per_round_us, const ProbeOptions& options) {
  if (per_round_us <= 0) return static_cast<uint64_t>(options.max_batch);
  const double want = std::ceil(options.batch_us / per_round_us);
  return static_cast<uint64_t>(std::clamp(want, 1.0, static_cast<double>(options.max_batch)));
}

// A spread this small (us) is no spread: a quantity that is ~0 (o_r of a
// message that has arrived) settles too.
constexpr double kNoSpreadUs = 1e-3;

// Iterations until the 90% half-width of `key` is within 2 eps of its mean.
bool settled(const std::vector<double>& key, const ProbeOptions& options) {
  const int n = static_cast<int>(key.size());
  if (n < options.min_iterations) return false;
  if (n >= options.max_iterations) return true;
  const Estimate e = estimate(key);
  return e.ci90 <= std::max(2 * options.eps * e.mean, kNoSpreadUs);
}

}  // namespace

double clock_overhead(const Link& link) {
  double best = 0;
  for (int run = 0; run < 5; ++run) {
    const double t0 = link.now_us();
    double last = t0;
    for (int i = 0; i < 1000; ++i)
      last = link.now_us();
    const double per = (last - t0) / 1000;
    best = run == 0 ? per : std::min(best, per);
  }
  return best;
}

PingPong ping_pong(Link& link, uint64_t bytes, double rtt_hint, double overhead,
                   const ProbeOptions& options) {
  const uint64_t reps = batch_size(rtt_hint, options);
  const bool warmup = bytes <= kWarmupMaxBytes;
  std::vector<double> rtt, os;
  for (int batch = 0;; ++batch) {
    // One round more than is timed: the first wakes the peer, which may
    // have slept between commands (it waits under wait_policy), so that
    // no timed round pays its wake-up.
    link.command({.count = 1, .rounds = reps + 1, .in_bytes = bytes, .out_bytes = 0});
    double rtt_sum = 0, os_sum = 0;
    for (uint64_t i = 0; i <= reps; ++i) {
      Op& reply = link.post_reply(0);
      const double t0 = link.now_us();
      Op& data = link.post_data(0, bytes);
      link.wait(data, "a ping");
      const double t1 = link.now_us();
      link.wait(reply, "a pong");
      const double t2 = link.now_us();
      if (i == 0) continue;
      os_sum += t1 - t0 - overhead;
      rtt_sum += t2 - t0 - overhead;
    }
    if (warmup && batch == 0) continue;
    rtt.push_back(rtt_sum / static_cast<double>(reps));
    os.push_back(os_sum / static_cast<double>(reps));
    if (settled(rtt, options)) break;
  }
  return {estimate(rtt), estimate(os)};
}

Estimate receive_overhead(Link& link, uint64_t bytes, double rtt, double overhead,
                          const ProbeOptions& options) {
  const double delay = std::max(1.2 * rtt, 100 * overhead);
  const uint64_t reps = batch_size(delay, options);
  std::vector<double> samples;
  // The first batch is a warm-up: the previous experiment's last messages
  // may still occupy the peer.
  for (int batch = 0;; ++batch) {
    link.command({.count = 1, .rounds = reps, .in_bytes = 0, .out_bytes = bytes});
    double sum = 0;
    for (uint64_t i = 0; i < reps; ++i) {
      const double t0 = link.now_us();
      link.wait(link.post_data(0, 0), "a request");
      link.wait_until_time(t0 + delay);
      const double t1 = link.now_us();
      link.wait(link.post_reply(bytes), "a reply");
      const double t2 = link.now_us();
      sum += t2 - t1 - overhead;
    }
    if (batch == 0) continue;
    samples.push_back(sum / static_cast<double>(reps));
    if (settled(samples, options)) break;
  }
  return estimate(samples);
}

Flood flood(Link& link, uint64_t bytes, double rtt0, double overhead) {
  constexpr int kFirstRuns = 10;
  constexpr int kMaxRuns = 2560;
  constexpr double kMaxFloodBytes = 256.0 * 1024 * 1024;
  const double tolerance = bytes > kWarmupMaxBytes ? 0.015 : 0.01;
  const int cap =
      static_cast<int>(std::clamp(kMaxFloodBytes / std::max<double>(1, static_cast<double>(bytes)),
                                  double{kFirstRuns}, double{kMaxRuns}));
  Flood out;
  double previous = -1;
  for (int runs = kFirstRuns;; runs *= 2) {
    link.command(
        {.count = static_cast<uint32_t>(runs), .rounds = 1, .in_bytes = bytes, .out_bytes = 0});
    Op& reply = link.post_reply(0);
    const double t0 = link.now_us();
    for (int i = 0; i < runs; ++i)
      link.wait(link.post_data(0, bytes), "a flood");
    const double loop = link.now_us() - t0 - overhead;
    link.wait(reply, "the flood's acknowledgement");
    out.per_message_us = std::max(0.0, loop / runs);
    out.runs = runs;
    const bool stable =
        previous >= 0 && std::abs(out.per_message_us - previous) <= tolerance * out.per_message_us;
    const bool round_trip_negligible = rtt0 <= 0.01 * loop;
    if ((stable && round_trip_negligible) || runs * 2 > cap) return out;
    previous = out.per_message_us;
  }
}

namespace {

// `copies` sends posted back to back, timed to the acknowledgement after
// the last, the peer's receives as `op` says.
Estimate release_time(Link& link, Command::Op receives, uint64_t bytes, int copies,
                      double ack_one_way, double overhead, const ProbeOptions& options) {
  std::vector<double> samples;
  for (int batch = 0;; ++batch) {
    link.command({.op = receives,
                  .count = static_cast<uint32_t>(copies),
                  .rounds = 1,
                  .in_bytes = bytes,
                  .out_bytes = 0});
    Op& reply = link.post_reply(0);
    std::vector<Op*> sent;
    const double t0 = link.now_us();
    for (int i = 0; i < copies; ++i)
      sent.push_back(&link.post_data(static_cast<size_t>(i), bytes));
    link.wait(reply, "a release's acknowledgement");
    const double t1 = link.now_us();
    for (Op* op : sent)
      link.wait(*op, "a release copy");
    if (batch == 0) continue;  // warm-up, as for o_r
    samples.push_back(t1 - t0 - overhead - ack_one_way);
    if (settled(samples, options)) break;
  }
  return estimate(samples);
}

}  // namespace

Estimate flat_release(Link& link, uint64_t bytes, int copies, double ack_one_way, double overhead,
                      const ProbeOptions& options) {
  return release_time(link, Command::Op::exchange, bytes, copies, ack_one_way, overhead, options);
}

double posted_gap(Link& link, uint64_t bytes, double ack_one_way, double overhead,
                  const ProbeOptions& options) {
  constexpr Command::Op kPosted = Command::Op::exchange_posted;
  const double one = release_time(link, kPosted, bytes, 1, ack_one_way, overhead, options).median;
  const double many =
      release_time(link, kPosted, bytes, kPostedCopies, ack_one_way, overhead, options).median;
  return std::max(0.0, (many - one) / (kPostedCopies - 1));
}

}  // namespace grove::model::probe
