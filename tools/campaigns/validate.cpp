#include "campaigns/validate.hpp"

#include <cmath>

#include "campaigns/sim_jobs.hpp"

namespace grove::model {

PortModel port_model(const PortParams& p) {
  return p.plogp ? plogp_model(*p.table) : hockney_model(p.alpha_us, p.beta_us_per_byte);
}

sim::SimConfig port_sim_config(const PortParams& p) {
  sim::SimConfig c;
  c.data = sim::DataMode::sizes;
  c.threads = 1;
  c.ranks_per_node = 1;
  c.recv_us = 0;
  c.jitter = 0;
  if (p.plogp) {
    c.model = sim::CostModel::plogp;
    c.plogp = p.table;
    c.overlap = true;  // o_s <= g: the gap, not the overhead, spaces the sends
  } else {
    c.model = sim::CostModel::hockney;
    c.copy_us = p.alpha_us;  // the sender pays alpha ...
    c.overlap = false;       // ... and holds its port until the bytes have left
    c.alpha_us = 0;
    c.bandwidth_gbps = 8e-3 / p.beta_us_per_byte;
  }
  return c;
}

bool Comparison::agrees() const {
  const double scale = std::max(std::fabs(sim_us), 1e-9);
  const double gap = (formula_us - sim_us) / scale;
  if (exact) return std::fabs(gap) <= 1e-6;
  if (two_sided) return std::fabs(gap) <= tolerance;
  return gap >= -1e-6 && gap <= tolerance;
}

Comparison compare_with_sim(const std::string& collective, const std::string& algorithm, int ranks,
                            size_t bytes, const PortParams& params) {
  const coll::AlgorithmSpec spec = coll::parse_algorithm(collective, algorithm);
  const ClosedForm& form = closed_form(collective, spec.name);
  Comparison c;
  // allgatherv's and alltoallv's closed forms take the largest block; the simulated job's
  // blocks are bytes .. bytes + 2 (model/sim_jobs.cpp).
  const double formula_bytes =
      static_cast<double>(bytes) +
      ((collective == "allgatherv" || collective == "alltoallv") && bytes > 0 ? 2 : 0);
  c.formula_us = predict_us(collective, algorithm, ranks, formula_bytes, port_model(params));
  c.exact = form.exact_when(CostCase{&spec, ranks, static_cast<double>(bytes)});
  c.tolerance = form.tolerance;
  c.two_sided = form.two_sided;
  JobShape shape;
  shape.collective = collective;
  shape.algorithm = algorithm;
  shape.size = ranks;
  shape.bytes = bytes;
  c.sim_us = sim::to_micros(run_on_sim(make_sim_job(shape), port_sim_config(params)).completion);
  return c;
}

}  // namespace grove::model
