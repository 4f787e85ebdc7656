#include "model/cost.hpp"

#include <memory>

#include <fmt/format.h>

#include "grove/error.hpp"

namespace grove::model {
namespace {

std::vector<ClosedForm> gather_forms() {
  std::vector<ClosedForm> out;
  for (const std::string& collective : coll::collectives_declared()) {
    for (const coll::AlgorithmInfo& info : coll::algorithms_of(collective)) {
      if (!info.cost.cost) continue;  // not modelled (shm, the fence's topologies)
      ClosedForm form;
      static_cast<coll::ClosedForm&>(form) = info.cost;
      form.collective = collective;
      form.name = info.name;
      form.schedule = info.schedule;
      out.push_back(std::move(form));
    }
  }
  return out;
}

}  // namespace

PortModel hockney_model(double alpha_us, double beta_us_per_byte) {
  PortModel m;
  m.u = [=](double bytes) { return alpha_us + bytes * beta_us_per_byte; };
  m.w = [=](double bytes) { return bytes * beta_us_per_byte; };
  m.lambda = 0;
  return m;
}

PortModel plogp_model(const sim::PlogpTable& table) {
  PortModel m;
  auto shared = std::make_shared<sim::PlogpTable>(table);
  m.u = [shared](double bytes) { return shared->send_gap_us(bytes); };
  m.w = m.u;
  m.lambda = table.latency_us();
  m.shared_port = table.shared_port();
  if (table.has_posted_gap())
    m.handshake = [shared](double bytes) { return shared->handshake_us(bytes); };
  m.call_us = table.call_us();
  m.shm_us = table.shm_us();
  if (!table.has_copy()) return m;
  auto curve = [shared](sim::CopyKind kind) {
    // A curve the table lacks is priced as a copy within one process.
    if (!shared->has_copy(kind)) kind = sim::CopyKind::local;
    return [shared, kind](double bytes) { return shared->copy_us(bytes, kind); };
  };
  m.copy = curve(sim::CopyKind::local);
  m.copy_in = curve(sim::CopyKind::in);
  m.copy_out = curve(sim::CopyKind::out);
  m.copy_cma = curve(sim::CopyKind::cma);
  return m;
}

const std::vector<ClosedForm>& closed_forms() {
  static const std::vector<ClosedForm> forms = gather_forms();
  return forms;
}

const ClosedForm& closed_form(const std::string& collective, const std::string& name) {
  for (const ClosedForm& f : closed_forms())
    if (f.collective == collective && f.name == name) return f;
  throw Error(Errc::invalid_argument,
              fmt::format("no closed form for {} algorithm '{}'", collective, name));
}

double predict_us(const std::string& collective, const std::string& algorithm, int ranks,
                  double bytes, const PortModel& model) {
  return predict_us(coll::parse_algorithm(collective, algorithm), ranks, bytes, model);
}

double predict_us(const coll::AlgorithmSpec& spec, int ranks, double bytes,
                  const PortModel& model) {
  const ClosedForm& form = closed_form(spec.collective, spec.name);
  if (ranks <= 1) return 0;
  if (bytes == 0 && spec.collective != "barrier") return 0;
  const CostCase c{&spec, ranks, bytes};
  if (!form.schedule) return form.cost(c, model);
  const double copies = form.copies && model.copy ? form.copies(c, model) : 0;
  return model.call_us + form.cost(c, model) + copies;
}

}  // namespace grove::model
