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

Region relabel_region(const Schedule& s, const Region& r, int shift) {
  if (r.mark == Mark::none || shift == 0) return r;
  const Symmetry& sym = s.symmetry;
  const std::vector<size_t>& offsets = sym.offsets_of(r.buffer);
  const std::vector<size_t>& lengths = sym.lengths_of(r.buffer);
  const size_t blocks = offsets.size();
  if (r.block >= blocks || lengths.size() != blocks) {
    throw Error(Errc::invalid_argument,
                fmt::format("schedule {}: a region marks block {} of a {}-block layout",
                            s.algorithm, r.block, blocks));
  }
  // block < blocks and 0 <= shift < size == blocks: one subtraction wraps it.
  size_t moved = r.block + static_cast<size_t>(shift);
  if (moved >= blocks) moved -= blocks;
  const size_t span = r.mark == Mark::block ? r.span : 1;
  if (span == 0 || moved + span > blocks) {
    throw Error(Errc::invalid_argument,
                fmt::format("schedule {}: a region of {} blocks from block {} wraps around a "
                            "{}-block layout",
                            s.algorithm, span, moved, blocks));
  }
  Region out = r;
  out.block = static_cast<uint32_t>(moved);
  const size_t last = moved + span - 1;
  out.length = offsets[last] + lengths[last] - offsets[moved];
  if (r.mark == Mark::block) out.offset = r.offset - offsets[r.block] + offsets[moved];
  return out;
}

Step relabel_step(const Schedule& schedule, const Step& step, int shift) {
  if (shift == 0) return step;
  Step out = step;
  if (step.kind == Kind::send || step.kind == Kind::recv)
    out.peer = static_cast<int32_t>((step.peer + shift) % schedule.symmetry.size);
  out.src = relabel_region(schedule, step.src, shift);
  out.dst = relabel_region(schedule, step.dst, shift);
  return out;
}

namespace {

bool same_region(const Region& a, const Region& b) {
  return a.buffer == b.buffer && a.offset == b.offset && a.length == b.length && a.mark == b.mark &&
         (a.mark == Mark::none || (a.block == b.block && a.span == b.span));
}

}  // namespace

std::string describe_step(const Step& step) {
  switch (step.kind) {
    case Kind::send:
      return fmt::format("send to {} on channel {}, {} bytes", step.peer, step.channel,
                         step.src.length);
    case Kind::recv:
      return fmt::format("recv from {} on channel {}, {} bytes", step.peer, step.channel,
                         step.dst.length);
    case Kind::copy:
      return fmt::format("copy {} bytes", step.src.length);
    case Kind::reduce:
      return fmt::format("reduce {} bytes", step.dst.length);
  }
  return "?";
}

std::string relabel_mismatch(const Schedule& shared, int shift, const Schedule& own) {
  if (own.steps.size() != shared.steps.size())
    return fmt::format("{} steps, not {}", own.steps.size(), shared.steps.size());
  if (own.deps != shared.deps) return "different dependencies";
  if (own.scratch_bytes != shared.scratch_bytes || own.max_sends != shared.max_sends ||
      own.max_recvs != shared.max_recvs || own.dtype != shared.dtype || own.op != shared.op)
    return "different scratch, limits or reduction";
  if (own.symmetry.size != shared.symmetry.size || own.symmetry.period != shared.symmetry.period ||
      own.symmetry.offsets != shared.symmetry.offsets ||
      own.symmetry.lengths != shared.symmetry.lengths ||
      own.symmetry.output_offsets != shared.symmetry.output_offsets ||
      own.symmetry.output_lengths != shared.symmetry.output_lengths ||
      own.symmetry.rank_layouts != shared.symmetry.rank_layouts ||
      own.symmetry.shape != shared.symmetry.shape)
    return "a different symmetry";
  for (StepId id = 0; id < own.steps.size(); ++id) {
    const Step& a = own.steps[id];
    const Step b = relabel_step(shared, shared.steps[id], shift);
    if (a.kind != b.kind || a.peer != b.peer || a.channel != b.channel ||
        a.deps_begin != b.deps_begin || a.deps_end != b.deps_end || !same_region(a.src, b.src) ||
        !same_region(a.dst, b.dst))
      return fmt::format("step {}: {} where the relabelled schedule has {}", id, describe_step(a),
                         describe_step(b));
  }
  return {};
}

}  // namespace grove::sched
