#pragma once
// Closed-form costs of every collective algorithm, keyed by the
// algorithm's canonical name, under Hockney (alpha-beta) and pLogP. The
// forms themselves are declared with their algorithms (each collective's
// registry in src/coll; the port model they are written over is described
// in coll/cost_terms.hpp); this file gathers them and makes the two port
// models from measured parameters.
//
// The simulator realises Hockney with sim_copy_us = alpha, sim_threads = 1,
// sim_overlap = false, sim_alpha_us = 0, sim_bandwidth_gbps = 8e-3 / beta;
// pLogP with the table and sim_threads = 1 (o_s <= g). docs/models.md lists
// every formula beside the published one and the corrections.

#include <string>
#include <vector>

#include "coll/algorithm.hpp"
#include "coll/cost_terms.hpp"
#include "transport/sim/plogp_table.hpp"

namespace grove::model {

using coll::CostCase;
using coll::PortModel;

PortModel hockney_model(double alpha_us, double beta_us_per_byte);
PortModel plogp_model(const sim::PlogpTable& table);

// One algorithm's form, with the names it was declared under.
struct ClosedForm : coll::ClosedForm {
  std::string collective;
  std::string name;  // the algorithm's name (radix and segment come from the spec)
  // False for the shared-memory engine: no schedule, so the simulator cannot
  // check the form; it is priced from the host terms only.
  bool schedule = true;
};

// Every closed form, in declaration order (collectives, then algorithms).
const std::vector<ClosedForm>& closed_forms();
// Throws grove::Error(invalid_argument) when no form exists for the pair.
const ClosedForm& closed_form(const std::string& collective, const std::string& name);

// Cost in microseconds of `algorithm` (text, e.g. "knomial:4") of
// `collective` on `ranks` ranks with `bytes`: the form, plus for a schedule
// algorithm the model's call_us and the copies on its critical path
// (ClosedForm::copies, when the model has a copy curve). NaN for `shm` when
// the model has no host terms (a table without a copy curve, or Hockney).
double predict_us(const std::string& collective, const std::string& algorithm, int ranks,
                  double bytes, const PortModel& model);
// The same for a parsed spec (its radix and segment as given).
double predict_us(const coll::AlgorithmSpec& spec, int ranks, double bytes, const PortModel& model);

}  // namespace grove::model
