#include "sched/schedule.hpp"

#include <fmt/format.h>

#include "grove/error.hpp"

namespace grove::sched {

StepId Builder::add(Step step, const std::vector<StepId>& after) {
  const auto id = static_cast<StepId>(schedule_.steps.size());
  step.deps_begin = static_cast<uint32_t>(schedule_.deps.size());
  for (StepId dep : after) {
    // Dependencies point backwards only: this is what keeps a schedule acyclic.
    if (dep >= id) {
      throw Error(Errc::internal, fmt::format("schedule {}: step {} depends on later step {}",
                                              schedule_.algorithm, id, dep));
    }
    schedule_.deps.push_back(dep);
  }
  step.deps_end = static_cast<uint32_t>(schedule_.deps.size());
  schedule_.steps.push_back(step);
  return id;
}

StepId Builder::send(int peer, Region src, std::initializer_list<StepId> after, uint8_t channel) {
  Step step;
  step.kind = Kind::send;
  step.peer = peer;
  step.channel = channel;
  step.src = src;
  return add(step, std::vector<StepId>(after));
}

StepId Builder::recv(int peer, Region dst, std::initializer_list<StepId> after, uint8_t channel) {
  Step step;
  step.kind = Kind::recv;
  step.peer = peer;
  step.channel = channel;
  step.dst = dst;
  return add(step, std::vector<StepId>(after));
}

StepId Builder::copy(Region src, Region dst, std::initializer_list<StepId> after) {
  Step step;
  step.kind = Kind::copy;
  step.src = src;
  step.dst = dst;
  return add(step, std::vector<StepId>(after));
}

StepId Builder::reduce(Region src, Region dst, std::initializer_list<StepId> after) {
  Step step;
  step.kind = Kind::reduce;
  step.src = src;
  step.dst = dst;
  return add(step, std::vector<StepId>(after));
}

}  // namespace grove::sched
