#pragma once
// Closed-form costs of every collective algorithm, keyed by the
// algorithm's canonical name, under Hockney (alpha-beta) and pLogP.
//
// Both are written over one port model, the simulator's (sim_config.hpp)
// with one worker thread: a rank's sends leave one after another, each
// holding the sender for u(m); a message reaches its receiver lambda after
// its sending ended (latency); receiving costs the receiver nothing but its
// NIC ingress, which takes w(m) per message in arrival order.
//
//   Hockney:  u(m) = alpha + m beta,  w(m) = m beta,  lambda = 0
//   pLogP:    u(m) = g(m),            w(m) = g(m),    lambda = L
//
// The simulator realises Hockney with sim_copy_us = alpha, sim_threads = 1,
// sim_overlap = false, sim_alpha_us = 0, sim_bandwidth_gbps = 8e-3 / beta;
// pLogP with the table and sim_threads = 1 (o_s <= g). Local copies and
// reductions cost nothing (gamma = 0).
//
// Each formula is exact where its `exact_when` holds (a power of two, a
// full tree, equal segments, ...) and an upper bound or approximation
// elsewhere, within the tolerance it states. docs/models.md lists every
// formula beside the published one and the corrections.

#include <functional>
#include <string>
#include <vector>

#include "coll/algorithm.hpp"
#include "transport/sim/plogp_table.hpp"

namespace grove::model {

struct PortModel {
  std::function<double(double bytes)> u;  // sender occupancy of one message, us
  std::function<double(double bytes)> w;  // ingress occupancy of one message, us
  double lambda = 0;                      // latency, us
};

PortModel hockney_model(double alpha_us, double beta_us_per_byte);
PortModel plogp_model(const sim::PlogpTable& table);

struct CostCase {
  const coll::AlgorithmSpec* spec;
  int ranks;
  double bytes;  // the collective's size argument: block bytes where per rank
};

struct ClosedForm {
  std::string collective;
  std::string name;       // the algorithm's name (radix and segment come from the spec)
  std::string formula;    // human-readable, in u, w, lambda
  std::string published;  // the published form and its tag, or "none"
  // Whether the formula is exact for this case; elsewhere it is within
  // `tolerance` (relative) of the simulated schedule, from above unless
  // `two_sided`.
  std::function<bool(const CostCase&)> exact_when;
  double tolerance = 0;
  bool two_sided = false;
  std::function<double(const CostCase&, const PortModel&)> cost;
};

// Every closed form, in a fixed order.
const std::vector<ClosedForm>& closed_forms();
// Throws grove::Error(invalid_argument) when no form exists for the pair.
const ClosedForm& closed_form(const std::string& collective, const std::string& name);

// Cost in microseconds of `algorithm` (text, e.g. "knomial:4") of
// `collective` on `ranks` ranks with `bytes`.
double predict_us(const std::string& collective, const std::string& algorithm, int ranks,
                  double bytes, const PortModel& model);

}  // namespace grove::model
