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

namespace grove::sched {

int Symmetry::shift_of(int rank) const {
  if (!declared() || size <= 0 || rank < 0 || rank >= size) return -1;
  const int d = ((rank - built_for) % size + size) % size;
  return d % period == 0 ? d : -1;
}

namespace {

Region relabel_region(const Schedule& s, const Region& r, int shift) {
  if (r.mark == Mark::none) return r;
  const Symmetry& sym = s.symmetry;
  const size_t blocks = sym.offsets.size();
  if (r.block >= blocks || sym.lengths.size() != blocks) {
    throw Error(Errc::invalid_argument,
                fmt::format("schedule {}: a region marks block {} of a {}-block layout",
                            s.algorithm, r.block, blocks));
  }
  const size_t moved = (r.block + static_cast<size_t>(shift)) % blocks;
  Region out = r;
  out.block = static_cast<uint32_t>(moved);
  out.length = sym.lengths[moved];
  if (r.mark == Mark::block) out.offset = r.offset - sym.offsets[r.block] + sym.offsets[moved];
  return out;
}

}  // namespace

Step relabel_step(const Schedule& schedule, const Step& step, int shift) {
  if (shift == 0) return step;
  Step out = step;
  if (step.kind == Kind::send || step.kind == Kind::recv)
    out.peer = static_cast<int32_t>((step.peer + shift) % schedule.symmetry.size);
  out.src = relabel_region(schedule, step.src, shift);
  out.dst = relabel_region(schedule, step.dst, shift);
  return out;
}

}  // namespace grove::sched
