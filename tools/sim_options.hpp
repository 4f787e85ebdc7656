#pragma once
// The model options shared by `grove sim` and `grove model`: each overrides
// the matching sim_* parameter (see src/transport/sim/sim_config.hpp).

#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "transport/sim/sim_config.hpp"

namespace grove::tools {

struct ModelOptions {
  std::optional<std::string> model;
  std::optional<double> alpha_us;
  std::optional<double> copy_us;
  std::optional<int> threads;
  std::optional<double> bandwidth_gbps;
  std::optional<double> recv_us;
  std::optional<int> ranks_per_node;
  std::optional<bool> overlap;
  std::optional<double> jitter;
  std::optional<uint64_t> seed;
  std::optional<std::string> plogp;

  void add_to(CLI::App& app) {
    app.add_option("--model", model, "Cost model: hockney or plogp (sim_model)")
        ->check(CLI::IsMember({"hockney", "plogp"}));
    app.add_option("--alpha", alpha_us, "Latency alpha (L) of one message, us (sim_alpha_us)");
    app.add_option("--c", copy_us, "Software cost c of one send copy, us (sim_copy_us)");
    app.add_option("--t", threads, "Worker threads t per rank sharing copies (sim_threads)");
    app.add_option("--bw", bandwidth_gbps, "NIC bandwidth B, Gbit/s (sim_bandwidth_gbps)");
    app.add_option("--recv", recv_us, "Receive-side software cost, us (sim_recv_us)");
    app.add_option("--ranks-per-node", ranks_per_node, "Ranks sharing a NIC (sim_ranks_per_node)");
    app.add_option("--overlap", overlap,
                   "true: a worker is free once its copy is made; false: once it left the NIC "
                   "(sim_overlap)");
    app.add_option("--jitter", jitter, "Software cost noise fraction (sim_jitter)");
    app.add_option("--seed", seed, "Seed of the jitter (sim_seed)");
    app.add_option("--plogp", plogp, "pLogP table file; implies --model plogp (sim_plogp_table)");
  }

  // The registry's sim_* values with these options on top.
  sim::SimConfig config() const {
    sim::SimConfig c = sim::SimConfig::from_params();
    if (model) c.model = *model == "plogp" ? sim::CostModel::plogp : sim::CostModel::hockney;
    if (alpha_us) c.alpha_us = *alpha_us;
    if (copy_us) c.copy_us = *copy_us;
    if (threads) c.threads = *threads;
    if (bandwidth_gbps) c.bandwidth_gbps = *bandwidth_gbps;
    if (recv_us) c.recv_us = *recv_us;
    if (ranks_per_node) c.ranks_per_node = *ranks_per_node;
    if (overlap) c.overlap = *overlap;
    if (jitter) c.jitter = *jitter;
    if (seed) c.seed = *seed;
    if (plogp) {
      c.plogp = std::make_shared<sim::PlogpTable>(sim::PlogpTable::load(*plogp));
      if (!model) c.model = sim::CostModel::plogp;
    }
    c.validate();
    return c;
  }
};

}  // namespace grove::tools
