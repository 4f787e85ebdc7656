#include "transport/sim/sim_config.hpp"

#include <fmt/format.h>

#include "core/params.hpp"
#include "grove/error.hpp"

namespace grove::sim {
namespace {

// Defaults are the release model's constants (docs/release-radix.md):
// alpha = 100 us, c = 25 us measured, t = 8 worker threads, a 10 GbE link.
const params::ChoiceParam sim_model{
    "sim_model",
    "hockney",
    {"hockney", "plogp"},
    "simulator cost model: hockney (alpha, c, t, B) or plogp (table in sim_plogp_table)"};
const params::ChoiceParam sim_data{
    "sim_data",
    "real",
    {"real", "sizes"},
    "simulator data mode: real (payloads copied) or sizes (lengths only, for scale)"};
const params::RealParam sim_alpha_us{"sim_alpha_us", 100, 0, 1e9,
                                     "simulator: network latency of one message, microseconds"};
const params::RealParam sim_copy_us{"sim_copy_us", 25, 0, 1e9,
                                    "simulator: software cost c of one send copy, microseconds"};
const params::IntParam sim_threads{"sim_threads", 8, 1, 1 << 16,
                                   "simulator: worker threads t per rank sharing copy costs"};
const params::RealParam sim_bandwidth_gbps{
    "sim_bandwidth_gbps", 10, 1e-6, 1e9,
    "simulator: NIC bandwidth B per direction, 10^9 bit/s (10 = 10 GbE)"};
const params::RealParam sim_recv_us{
    "sim_recv_us", 0, 0, 1e9, "simulator: receive-side software cost per message, microseconds"};
const params::IntParam sim_ranks_per_node{"sim_ranks_per_node", 1, 1, 1 << 20,
                                          "simulator: ranks sharing one node's NIC"};
const params::RealParam sim_shm_alpha_us{"sim_shm_alpha_us", 0.5, 0, 1e9,
                                         "simulator: intra-node message latency, microseconds"};
const params::RealParam sim_shm_bandwidth_gbps{"sim_shm_bandwidth_gbps", 100, 1e-6, 1e9,
                                               "simulator: intra-node bandwidth, 10^9 bit/s"};
const params::BoolParam sim_overlap{
    "sim_overlap", true,
    "simulator: a send frees its worker thread once copied (true) or once on the wire (false)"};
const params::RealParam sim_jitter{
    "sim_jitter", 0, 0, 100, "simulator: software cost noise, cost x (1 + jitter x uniform[0,1))"};
const params::IntParam sim_seed{"sim_seed", 1, 0, int64_t{1} << 53,
                                "simulator: seed of the jitter"};
const params::StringParam sim_plogp_table{
    "sim_plogp_table", "", "simulator: pLogP table file (L, then bytes os_us or_us g_us rows)"};

[[noreturn]] void bad(const std::string& why) {
  throw Error(Errc::invalid_parameter, "simulator configuration: " + why);
}

}  // namespace

std::string_view cost_model_name(CostModel model) {
  return model == CostModel::hockney ? "hockney" : "plogp";
}

std::string_view data_mode_name(DataMode mode) {
  return mode == DataMode::real ? "real" : "sizes";
}

void SimConfig::validate() const {
  auto non_negative = [](double v, const char* name) {
    if (!(v >= 0)) bad(fmt::format("{} = {} must be >= 0", name, v));
  };
  non_negative(alpha_us, "alpha_us");
  non_negative(copy_us, "copy_us");
  non_negative(recv_us, "recv_us");
  non_negative(shm_alpha_us, "shm_alpha_us");
  non_negative(jitter, "jitter");
  if (!(bandwidth_gbps > 0)) bad(fmt::format("bandwidth_gbps = {} must be > 0", bandwidth_gbps));
  if (!(shm_bandwidth_gbps > 0))
    bad(fmt::format("shm_bandwidth_gbps = {} must be > 0", shm_bandwidth_gbps));
  if (threads < 1) bad(fmt::format("threads = {} must be >= 1", threads));
  if (ranks_per_node < 1) bad(fmt::format("ranks_per_node = {} must be >= 1", ranks_per_node));
  if (model == CostModel::plogp && !plogp)
    bad("pLogP mode needs a table (sim_plogp_table or --plogp FILE)");
}

SimConfig SimConfig::from_params() {
  SimConfig c;
  c.model = sim_model.get() == "plogp" ? CostModel::plogp : CostModel::hockney;
  c.data = sim_data.get() == "sizes" ? DataMode::sizes : DataMode::real;
  c.alpha_us = sim_alpha_us.get();
  c.copy_us = sim_copy_us.get();
  c.threads = static_cast<int>(sim_threads.get());
  c.bandwidth_gbps = sim_bandwidth_gbps.get();
  c.recv_us = sim_recv_us.get();
  c.ranks_per_node = static_cast<int>(sim_ranks_per_node.get());
  c.shm_alpha_us = sim_shm_alpha_us.get();
  c.shm_bandwidth_gbps = sim_shm_bandwidth_gbps.get();
  c.overlap = sim_overlap.get();
  c.jitter = sim_jitter.get();
  c.seed = static_cast<uint64_t>(sim_seed.get());
  if (!sim_plogp_table.get().empty())
    c.plogp = std::make_shared<PlogpTable>(PlogpTable::load(sim_plogp_table.get()));
  return c;
}

std::string SimConfig::describe() const {
  if (model == CostModel::plogp) {
    return fmt::format("plogp: L={}us table rows={} threads={} ranks_per_node={} data={}",
                       plogp ? plogp->latency_us() : 0.0, plogp ? plogp->rows().size() : 0, threads,
                       ranks_per_node, data_mode_name(data));
  }
  return fmt::format(
      "hockney: alpha={}us c={}us t={} B={}Gbit/s recv={}us ranks_per_node={} overlap={} "
      "jitter={} data={}",
      alpha_us, copy_us, threads, bandwidth_gbps, recv_us, ranks_per_node, overlap, jitter,
      data_mode_name(data));
}

}  // namespace grove::sim
