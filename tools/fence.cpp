// `grove fence campaign`: the fence's deterministic fault campaign on the
// simulator (every relay killed at every message step, plus seeded random
// double and triple failures). `grove fence compare`: release coverage of the
// routing tree against the derived release tree across payloads, beside the
// release-radix model and the simulated k-ary release (docs/fence.md).

#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "campaigns/fence_sim.hpp"
#include "campaigns/sim_jobs.hpp"
#include "command.hpp"
#include "core/params.hpp"
#include "model/radix.hpp"
#include "model/release.hpp"
#include "sim_options.hpp"
#include "usage.hpp"

namespace grove::tools {
namespace {

struct CampaignArgs {
  std::vector<int> sizes = {8, 16, 64, 256};
  std::vector<int> release = {2, 3, 4};
  std::vector<int> routing = {4, 8, 16, 32, 64};
  size_t random = 10000;
  size_t random_max_size = 256;
  bool kill_root = false;
  size_t max_steps = 0;
  uint64_t seed = 1;
  int generations = 2;
  std::string segment = "64KiB";
  size_t max_blob = 48;
  ModelOptions model;
};

// A fence needs two ranks to have a relay; radices below 2 are no trees.
void check_fence_shape(const std::vector<int>& sizes, const std::vector<int>& release,
                       const std::vector<int>& routing) {
  for (int n : sizes)
    require_range("--sizes", n, 2, 1 << 20);
  for (int r : release)
    require_range("--release", r, 2, 1 << 20);
  for (int r : routing)
    require_range("--routing", r, 2, 1 << 20);
}

int run_campaign(const CampaignArgs& a) {
  params::load_process_params();
  check_fence_shape(a.sizes, a.release, a.routing);
  require_range("--random-max-size", static_cast<int64_t>(a.random_max_size), 2, 1 << 20);
  runtime::FenceCampaign campaign;
  campaign.sizes = a.sizes;
  campaign.release_radices = a.release;
  campaign.routing_radices = a.routing;
  campaign.random_trials = a.random;
  campaign.random_max_size = a.random_max_size;
  campaign.random_kill_root = a.kill_root;
  campaign.max_steps = a.max_steps;
  campaign.seed = a.seed;
  campaign.generations = a.generations;
  campaign.release_segment =
      interpret_options([&] { return params::parse_bytes(a.segment, "--segment"); });
  campaign.max_blob = a.max_blob;
  const sim::SimConfig config = interpret_options([&] { return a.model.config(); });
  fmt::print(
      "fence campaign: sizes [{}], release radices [{}], routing radices [{}], {} fences "
      "per run, release segment {} B, blobs 0..{} B\nmodel: {}\n",
      fmt::join(a.sizes, ","), fmt::join(a.release, ","), fmt::join(a.routing, ","), a.generations,
      campaign.release_segment, a.max_blob, config.describe());
  const runtime::FenceCampaignCounts counts = runtime::run_fence_campaign(
      campaign, config, [](const std::string& line) { fmt::print("  {}\n", line); });
  fmt::print(
      "shapes\t{}\nsingle_relay_kills\t{}\nrandom_double_triple\t{}\nranks_killed\t{}\n"
      "fences_completed\t{}\nreplays\t{}\nparked\t{}\nadopted_up\t{}\nsuperseded\t{}\n"
      "bad_runs\t{}\nwall_s\t{:.1f}\n",
      counts.shapes, counts.single_runs, counts.random_runs, counts.failures, counts.fences,
      counts.replays, counts.parked, counts.adopted_up, counts.superseded, counts.bad,
      counts.wall_seconds);
  for (const std::string& bad : counts.first_bad)
    fmt::print("BAD {}\n", bad);
  return counts.bad == 0 ? 0 : 1;
}

struct CompareArgs {
  std::vector<int> sizes = {64, 256, 1024};
  std::vector<std::string> payloads = {"0", "10KB", "100KB", "1MB"};  // whole modex
  std::vector<int> release = {2, 3, 4, 8};
  int routing = 64;
  // fence_release_segment values to compare (empty: the parameter's value).
  std::vector<std::string> segments;
  ModelOptions model;
};

// One failure-free fence on the simulator; its release coverage and the
// encoded release's size.
runtime::FenceSimResult simulate_fence(int n, size_t blob, int routing, int release, bool low,
                                       uint64_t segment, const sim::SimConfig& config) {
  runtime::FenceSimCase c;
  c.size = n;
  c.generations = 1;
  c.blob_bytes = blob;
  c.config.routing_radix = routing;
  c.config.release_radix = release;
  c.config.low_radix_release = low;
  c.config.release_segment = segment;
  return runtime::run_fence_sim(c, config);
}

// The k-ary release schedule of docs/release-radix.md, pipelined in
// `segment`-byte segments like the fence's (0: store-and-forward).
double simulated_kary_release_us(int n, int r, size_t bytes, uint64_t segment,
                                 sim::SimConfig config) {
  config.data = sim::DataMode::sizes;
  model::JobShape shape;
  shape.collective = "release";
  shape.algorithm = model::ReleaseShape{r, segment < bytes ? segment : 0}.to_string();
  shape.size = n;
  shape.bytes = bytes;
  return sim::to_micros(model::run_on_sim(model::make_sim_job(shape), config).completion);
}

int run_compare(const CompareArgs& a) {
  params::load_process_params();
  check_fence_shape(a.sizes, a.release, {a.routing});
  std::vector<uint64_t> segments;
  interpret_options([&] {
    for (const std::string& text : a.payloads)
      params::parse_bytes(text, "--payloads");
    for (const std::string& text : a.segments)
      segments.push_back(params::parse_bytes(text, "--segment"));
    if (segments.empty()) segments.push_back(runtime::FenceConfig::from_params().release_segment);
  });
  const sim::SimConfig finite = interpret_options([&] { return a.model.config(); });
  sim::SimConfig infinite = finite;
  infinite.bandwidth_gbps = 1e6;
  fmt::print("release coverage (root starts the release -> last rank holds it), us\n");
  fmt::print("model: {}\n", finite.describe());
  fmt::print(
      "n\tmodex\tbandwidth\ttree\tradix\tsegment_B\tpayload_B\tfence_coverage_us\t"
      "fence_total_us\tkary_release_sim_us\tseed_formula_us\n");
  for (int n : a.sizes) {
    for (const std::string& text : a.payloads) {
      const uint64_t modex = params::parse_bytes(text, "--payloads");
      const size_t blob = static_cast<size_t>(modex / static_cast<uint64_t>(n));
      for (const sim::SimConfig* config : std::vector<const sim::SimConfig*>{&finite, &infinite}) {
        const bool inf = config == &infinite;
        model::ReleaseParams p;
        p.alpha_us = config->alpha_us;
        p.c_us = config->copy_us;
        p.threads = config->threads;
        p.bandwidth_gbps = config->bandwidth_gbps;
        std::vector<std::pair<bool, int>> trees = {{false, a.routing}};
        for (int r : a.release)
          trees.emplace_back(true, r);
        for (const uint64_t segment : segments) {
          for (const auto& [low, radix] : trees) {
            const runtime::FenceSimResult f =
                simulate_fence(n, blob, a.routing, low ? radix : 2, low, segment, *config);
            if (!f.ok) {
              fmt::print(stderr, "fence sim failed: {}\n", f.failure);
              return 1;
            }
            const int r = std::min(radix, n - 1);
            fmt::print("{}\t{}\t{}\t{}\t{}\t{}\t{}\t{:.1f}\t{:.1f}\t{:.1f}\t{:.1f}\n", n, text,
                       inf ? "inf" : fmt::format("{}Gb/s", config->bandwidth_gbps),
                       low ? "release" : "routing", radix, segment, f.payload_bytes,
                       sim::to_micros(f.coverage), sim::to_micros(f.completion),
                       simulated_kary_release_us(n, r, f.payload_bytes, segment, *config),
                       model::seed_release_us(n, r, static_cast<double>(f.payload_bytes), p));
          }
        }
      }
    }
  }
  return 0;
}

const RegisterCommand fence_command{{
    "fence",
    "The reliable fence on the simulator: fault campaign and release-tree comparison",
    [](CLI::App& sub) -> std::function<int()> {
      sub.require_subcommand(1);
      auto campaign = std::make_shared<CampaignArgs>();
      CLI::App* c =
          sub.add_subcommand("campaign",
                             "Every relay killed at every message step, plus random double/triple "
                             "failures; exit 1 if any run fails");
      c->add_option("--sizes", campaign->sizes, "Rank counts")->delimiter(',');
      c->add_option("--release", campaign->release, "Release radices")->delimiter(',');
      c->add_option("--routing", campaign->routing, "Routing (rollup) radices")->delimiter(',');
      c->add_option("--random", campaign->random, "Random double/triple-failure runs")
          ->check(CLI::Range(0, 100000000));
      c->add_option("--random-max-size", campaign->random_max_size,
                    "Largest rank count used by random runs");
      c->add_flag("--kill-root", campaign->kill_root,
                  "Every random run kills the root (and one or two other ranks)");
      c->add_option("--max-steps", campaign->max_steps,
                    "Kill each relay at most at this many steps, evenly spread (0: every step)")
          ->check(CLI::Range(0, 100000000));
      c->add_option("--campaign-seed", campaign->seed, "Seed of the random runs");
      c->add_option("--fences", campaign->generations, "Fences per run, back to back")
          ->check(CLI::Range(1, 64));
      c->add_option("--segment", campaign->segment,
                    "fence_release_segment of every run (0: the whole payload in one message)");
      c->add_option("--max-blob", campaign->max_blob,
                    "Blobs are 0 .. this many bytes (a smaller --segment than ~N x max-blob / 2 "
                    "makes every release several segments)")
          ->check(CLI::Range(0, 1 << 20));
      campaign->model.add_to(*c);

      auto compare = std::make_shared<CompareArgs>();
      CLI::App* k = sub.add_subcommand(
          "compare",
          "Release coverage: routing tree vs derived release tree, across payloads, "
          "with finite and infinite NIC bandwidth");
      k->add_option("--sizes", compare->sizes, "Rank counts")->delimiter(',');
      k->add_option("--payloads", compare->payloads, "Whole-modex sizes (split over the ranks)")
          ->delimiter(',');
      k->add_option("--release", compare->release, "Release radices")->delimiter(',');
      k->add_option("--routing", compare->routing, "Routing (rollup) radix");
      k->add_option("--segment", compare->segments,
                    "fence_release_segment values, each a run of every tree (0: store-and-forward; "
                    "default: the parameter's value)")
          ->delimiter(',');
      compare->model.add_to(*k);
      return [c, campaign, compare]() {
        return c->parsed() ? run_campaign(*campaign) : run_compare(*compare);
      };
    },
}};

}  // namespace
}  // namespace grove::tools
