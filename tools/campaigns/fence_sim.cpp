#include "campaigns/fence_sim.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "transport/forwarding.hpp"
#include "transport/sim/sim_world.hpp"

namespace grove::runtime {
namespace {

Blob sim_blob(int rank, int generation, const FenceSimCase& c) {
  const uint64_t h = (static_cast<uint64_t>(rank) * 0x9e3779b97f4a7c15ull) ^
                     (static_cast<uint64_t>(generation) * 0xbf58476d1ce4e5b9ull);
  Blob out(c.blob_bytes ? *c.blob_bytes : (h >> 17) % (c.max_blob + 1));
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<std::byte>((h >> (i % 48)) + i);
  return out;
}

// Records the virtual time of every active message a rank sends.
class StepTap final : public ForwardingTransport {
 public:
  StepTap(sim::SimWorld& world, int rank, std::vector<sim::Time>* steps)
      : ForwardingTransport(world.transport(rank)), world_(world), steps_(steps) {}
  void am_send(int peer, uint16_t id, std::span<const std::byte> payload) override {
    ++sent_;
    if (steps_) steps_->push_back(world_.now());
    inner().am_send(peer, id, payload);
  }
  uint64_t sent() const { return sent_; }

 private:
  sim::SimWorld& world_;
  std::vector<sim::Time>* steps_;
  uint64_t sent_ = 0;
};

struct PendingNotice {
  sim::Time at;
  int rank;  // who is told
  FailureNotice notice;
};

// The first living rank from `root` at time `at` by the ground truth.
int root_at(int size, int root, const std::map<int, sim::Time>& fail_time, sim::Time at) {
  for (int v = 0; v < size; ++v) {
    const int rank = (root + v) % size;
    auto it = fail_time.find(rank);
    if (it == fail_time.end() || it->second > at) return rank;
  }
  return -1;
}

std::vector<PendingNotice> plan_notices(const FenceSimCase& c,
                                        const std::map<int, sim::Time>& fail_time) {
  std::vector<std::pair<sim::Time, int>> order;
  for (const auto& [rank, at] : fail_time)
    order.emplace_back(at, rank);
  std::sort(order.begin(), order.end());
  std::mt19937_64 rng(c.seed);
  const auto delay = [&] {
    return c.notice_delay > 0
               ? static_cast<sim::Time>(rng() % static_cast<uint64_t>(c.notice_delay + 1))
               : 0;
  };
  std::vector<PendingNotice> out;
  std::vector<FailureNotice> history;
  for (size_t i = 0; i < order.size(); ++i) {
    const auto [at, failed] = order[i];
    history.push_back({failed, i + 1, "killed by the simulator campaign"});
    const int root = root_at(c.size, c.config.root, fail_time, at);
    for (int q = 0; q < c.size; ++q) {
      if (q == failed) continue;
      const bool told = c.notices == SimNotices::all || q == root ||
                        (c.notices == SimNotices::mixed && rng() % 2 == 0);
      if (!told) continue;
      const sim::Time when = at + delay();
      if (q == root) {
        // The root hears everything in order: it may be new, and its dead
        // predecessor may not have relayed the earlier notices.
        for (const FailureNotice& n : history)
          out.push_back({when, q, n});
      } else {
        out.push_back({when, q, history.back()});
      }
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const PendingNotice& a, const PendingNotice& b) { return a.at < b.at; });
  return out;
}

}  // namespace

std::string_view sim_notices_name(SimNotices notices) {
  switch (notices) {
    case SimNotices::all:
      return "all";
    case SimNotices::root_only:
      return "root_only";
    case SimNotices::mixed:
      return "mixed";
  }
  return "?";
}

std::string FenceSimResult::describe() const {
  return fmt::format(
      "{}{}: {} survivors, completion {:.1f} us, coverage {:.1f} us, {} messages, "
      "{} replays, {} parked, {} adopted up",
      ok ? "ok" : "FAILED", ok ? "" : " (" + failure + ")", survivors, sim::to_micros(completion),
      sim::to_micros(coverage), messages, replays, parked, adopted_up);
}

std::vector<int> fence_relays(int size, const FenceConfig& config) {
  const topo::LiveTree routing(size, config.root, {}, config.routing_radix);
  const topo::LiveTree release(size, config.root, {}, config.release_radix);
  std::vector<int> out;
  for (int r = 0; r < size; ++r) {
    const bool relays =
        !routing.children(r).empty() || (config.low_radix_release && !release.children(r).empty());
    if (relays) out.push_back(r);
  }
  return out;
}

FenceSimResult run_fence_sim(const FenceSimCase& c, const sim::SimConfig& sim_config) {
  FenceSimResult result;
  sim::SimConfig sc = sim_config;
  sc.data = sim::DataMode::real;
  sim::SimWorld world(c.size, sc);
  FenceConfig config = c.config;
  config.timing = true;

  std::map<int, sim::Time> fail_time;
  for (const auto& [rank, at] : c.failures) {
    if (rank < 0 || rank >= c.size) {
      throw Error(Errc::invalid_argument,
                  fmt::format("fence sim: failure of rank {} of {}", rank, c.size));
    }
    if (!fail_time.count(rank)) fail_time[rank] = at;
  }
  for (const auto& [rank, at] : fail_time)
    world.fail(rank, at);
  std::vector<PendingNotice> notices = plan_notices(c, fail_time);
  size_t next_notice = 0;

  std::vector<std::unique_ptr<StepTap>> taps;
  std::vector<std::unique_ptr<FenceEngine>> engines;
  for (int r = 0; r < c.size; ++r) {
    taps.push_back(std::make_unique<StepTap>(world, r, c.record_steps ? &result.steps : nullptr));
    engines.push_back(std::make_unique<FenceEngine>(*taps.back(), 1, config));
  }
  for (int r = 0; r < c.size; ++r)
    for (int g = 0; g < c.generations; ++g)
      engines[static_cast<size_t>(r)]->start(sim_blob(r, g, c));

  const auto fail = [&](std::string why) {
    result.ok = false;
    result.failure = std::move(why);
    return result;
  };
  try {
    for (;;) {
      sim::Time deadline = c.limit;
      if (next_notice < notices.size()) deadline = std::min(deadline, notices[next_notice].at);
      double timer = std::numeric_limits<double>::infinity();
      for (int r = 0; r < c.size; ++r)
        if (!world.failed(r))
          timer = std::min(timer, engines[static_cast<size_t>(r)]->next_timer());
      if (std::isfinite(timer)) deadline = std::min(deadline, sim::from_seconds(timer));
      world.run_until([] { return false; }, deadline);
      if (world.now() < deadline && deadline < c.limit) world.advance(deadline - world.now());
      while (next_notice < notices.size() && notices[next_notice].at <= world.now()) {
        const PendingNotice& p = notices[next_notice++];
        if (!world.failed(p.rank)) engines[static_cast<size_t>(p.rank)]->on_notice(p.notice);
      }
      for (int r = 0; r < c.size; ++r) {
        if (world.failed(r)) continue;
        engines[static_cast<size_t>(r)]->poll();
        engines[static_cast<size_t>(r)]->check_error();
      }
      bool timers = false;
      for (int r = 0; r < c.size; ++r)
        if (!world.failed(r) && std::isfinite(engines[static_cast<size_t>(r)]->next_timer()))
          timers = true;
      if (world.idle() && next_notice >= notices.size() && !timers) break;
      if (world.now() >= c.limit) {
        return fail(fmt::format("virtual time limit {:.0f} us passed", sim::to_micros(c.limit)));
      }
    }
  } catch (const Error& e) {
    return fail(e.what());
  }

  // The checks: every survivor, every fence, exactly once, identical bytes.
  std::vector<std::vector<FenceResult>> results(static_cast<size_t>(c.size));
  for (int r = 0; r < c.size; ++r) {
    const FenceEngine& e = *engines[static_cast<size_t>(r)];
    result.messages += taps[static_cast<size_t>(r)]->sent();
    result.replays += e.release_stats().replays;
    result.parked += e.release_stats().parked;
    result.adopted_up += e.stats().adopted_up;
    result.superseded += e.release_stats().superseded;
  }
  for (int r = 0; r < c.size; ++r) {
    if (fail_time.count(r)) continue;
    ++result.survivors;
    FenceEngine& e = *engines[static_cast<size_t>(r)];
    if (e.stats().results_held != static_cast<uint64_t>(c.generations)) {
      return fail(fmt::format("rank {} held {} results of {} fences (hang or duplicate); {}", r,
                              e.stats().results_held, c.generations, e.describe_pending()));
    }
    for (int g = 0; g < c.generations; ++g) {
      if (!e.delivered(static_cast<uint64_t>(g)))
        return fail(fmt::format("rank {} has no result of fence {}", r, g));
      results[static_cast<size_t>(r)].push_back(e.take_result(static_cast<uint64_t>(g)));
    }
    const auto t = e.timing(static_cast<uint64_t>(c.generations - 1));
    if (t) result.completion = std::max(result.completion, sim::from_seconds(t->held));
  }
  int first = -1;
  for (int r = 0; r < c.size; ++r) {
    if (fail_time.count(r)) continue;
    if (first < 0) {
      first = r;
      continue;
    }
    for (int g = 0; g < c.generations; ++g) {
      const FenceResult& a = results[static_cast<size_t>(first)][static_cast<size_t>(g)];
      const FenceResult& b = results[static_cast<size_t>(r)][static_cast<size_t>(g)];
      if (a.blobs != b.blobs || a.departed != b.departed || a.origin != b.origin) {
        return fail(fmt::format("ranks {} and {} hold different results of fence {}", first, r, g));
      }
    }
  }
  if (first >= 0) {
    for (int g = 0; g < c.generations; ++g) {
      const FenceResult& a = results[static_cast<size_t>(first)][static_cast<size_t>(g)];
      for (int r = 0; r < c.size; ++r) {
        const bool listed = std::find(a.departed.begin(), a.departed.end(), r) != a.departed.end();
        if (listed && !fail_time.count(r))
          return fail(fmt::format("fence {}: living rank {} listed departed", g, r));
        const Blob expected = listed ? Blob{} : sim_blob(r, g, c);
        if (a.blobs[static_cast<size_t>(r)] != expected)
          return fail(fmt::format("fence {}: entry of rank {} is wrong", g, r));
      }
    }
    const int origin = results[static_cast<size_t>(first)][0].origin;
    if (!fail_time.count(origin)) {
      const auto t = engines[static_cast<size_t>(origin)]->timing(0);
      if (t && t->covered > 0) result.coverage = sim::from_seconds(t->covered - t->started);
      if (t) result.payload_bytes = t->payload_bytes;
    }
  }
  if (c.record_steps) {
    std::sort(result.steps.begin(), result.steps.end());
    result.steps.erase(std::unique(result.steps.begin(), result.steps.end()), result.steps.end());
  }
  result.ok = true;
  return result;
}

FenceCampaignCounts run_fence_campaign(const FenceCampaign& campaign,
                                       const sim::SimConfig& sim_config,
                                       const std::function<void(const std::string&)>& progress) {
  const auto wall_start = std::chrono::steady_clock::now();
  FenceCampaignCounts counts;
  uint64_t serial = 0;
  const auto account = [&](const FenceSimCase& c, const FenceSimResult& r) {
    counts.failures += c.failures.size();
    counts.fences += static_cast<uint64_t>(r.survivors) * static_cast<uint64_t>(c.generations);
    counts.replays += r.replays;
    counts.parked += r.parked;
    counts.adopted_up += r.adopted_up;
    counts.superseded += r.superseded;
    if (r.ok) return;
    ++counts.bad;
    if (counts.first_bad.size() < 10) {
      std::vector<std::string> kills;
      for (const auto& [rank, at] : c.failures)
        kills.push_back(fmt::format("{}@{:.3f}us", rank, sim::to_micros(at)));
      counts.first_bad.push_back(
          fmt::format("n={} {} segment={} max_blob={} notices={} seed={} kills [{}]: {}", c.size,
                      c.config.describe(), c.config.release_segment, c.max_blob,
                      sim_notices_name(c.notices), c.seed, fmt::join(kills, " "), r.failure));
    }
  };

  // Shapes, with radices at or above n-1 (a flat tree) counted once.
  struct Shape {
    int size, routing, release;
    bool operator<(const Shape& o) const {
      return std::tie(size, routing, release) < std::tie(o.size, o.routing, o.release);
    }
  };
  std::set<Shape> shapes;
  for (int n : campaign.sizes)
    for (int rel : campaign.release_radices)
      for (int rr : campaign.routing_radices)
        shapes.insert({n, std::max(2, std::min(rr, n - 1)), std::max(2, std::min(rel, n - 1))});
  std::map<Shape, sim::Time> clean_completion;

  const auto make_case = [&](const Shape& s) {
    FenceSimCase c;
    c.size = s.size;
    c.config.routing_radix = s.routing;
    c.config.release_radix = s.release;
    c.config.release_segment = campaign.release_segment;
    c.max_blob = campaign.max_blob;
    c.generations = campaign.generations;
    return c;
  };

  for (const Shape& s : shapes) {
    ++counts.shapes;
    FenceSimCase clean = make_case(s);
    clean.record_steps = true;
    const FenceSimResult base = run_fence_sim(clean, sim_config);
    account(clean, base);
    clean_completion[s] = base.completion;
    std::vector<sim::Time> steps = base.steps;
    if (campaign.max_steps > 0 && steps.size() > campaign.max_steps) {
      std::vector<sim::Time> some;
      for (size_t i = 0; i < campaign.max_steps; ++i)
        some.push_back(steps[i * steps.size() / campaign.max_steps]);
      steps = some;
    }
    const std::vector<int> relays = fence_relays(s.size, clean.config);
    uint64_t bad_before = counts.bad;
    for (int relay : relays) {
      for (sim::Time at : steps) {
        FenceSimCase c = make_case(s);
        c.failures = {{relay, at}};
        c.notices = static_cast<SimNotices>(serial % 3);
        c.seed = ++serial;
        account(c, run_fence_sim(c, sim_config));
        ++counts.single_runs;
      }
    }
    if (progress) {
      progress(fmt::format("n={} rollup_radix={} release_radix={}: {} relays x {} steps, {} bad",
                           s.size, s.routing, s.release, relays.size(), steps.size(),
                           counts.bad - bad_before));
    }
  }

  std::vector<Shape> random_shapes;
  for (const Shape& s : shapes)
    if (static_cast<size_t>(s.size) <= campaign.random_max_size && s.size >= 4)
      random_shapes.push_back(s);
  std::mt19937_64 rng(campaign.seed);
  for (size_t trial = 0; trial < campaign.random_trials && !random_shapes.empty(); ++trial) {
    const Shape& s = random_shapes[rng() % random_shapes.size()];
    FenceSimCase c = make_case(s);
    const size_t k = 2 + rng() % 2;
    const sim::Time span = std::max<sim::Time>(clean_completion[s] * 3 / 2, sim::from_micros(10));
    std::set<int> victims;
    if (campaign.random_kill_root) victims.insert(c.config.root);
    while (victims.size() < k)
      victims.insert(static_cast<int>(rng() % static_cast<uint64_t>(s.size)));
    for (int v : victims)
      c.failures.emplace_back(v, static_cast<sim::Time>(rng() % static_cast<uint64_t>(span)));
    c.notices = static_cast<SimNotices>(rng() % 3);
    c.seed = rng();
    c.notice_delay = static_cast<sim::Time>(rng() % static_cast<uint64_t>(sim::from_micros(2000)));
    account(c, run_fence_sim(c, sim_config));
    ++counts.random_runs;
  }
  if (progress) {
    progress(fmt::format("random double/triple failures: {} runs, {} bad", counts.random_runs,
                         counts.bad));
  }
  counts.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return counts;
}

}  // namespace grove::runtime
