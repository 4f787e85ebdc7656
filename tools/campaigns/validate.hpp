#pragma once
// Closed form against simulation: the simulator configured to realise a
// PortModel (see cost.hpp), the actual schedule run on it, both numbers.

#include <string>

#include "model/cost.hpp"
#include "transport/sim/sim_config.hpp"

namespace grove::model {

struct PortParams {
  bool plogp = false;
  double alpha_us = 10;                          // Hockney
  double beta_us_per_byte = 1e-3;                // Hockney (1e-3 us/B = 8 Gbit/s)
  std::shared_ptr<const sim::PlogpTable> table;  // pLogP
};

PortModel port_model(const PortParams& p);
sim::SimConfig port_sim_config(const PortParams& p);

struct Comparison {
  double formula_us = 0;
  double sim_us = 0;
  bool exact = false;    // the formula's exact_when holds
  double tolerance = 0;  // allowed relative gap where not exact
  bool two_sided = false;
  bool agrees() const;  // within tolerance (exact: 1e-6 relative)
  double relative_gap() const { return sim_us == 0 ? 0 : (formula_us - sim_us) / sim_us; }
};

// bytes: the collective's size argument (block bytes where per rank).
Comparison compare_with_sim(const std::string& collective, const std::string& algorithm, int ranks,
                            size_t bytes, const PortParams& params);

}  // namespace grove::model
