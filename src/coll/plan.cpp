#include "coll/plan.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "grove/error.hpp"

namespace grove::coll {

Region sub_region(const Region& r, size_t offset, size_t length) {
  if (r.mark != Mark::none) {
    throw Error(Errc::internal,
                "sub_region of a region marked for relabelling (use block_region or sized_like)");
  }
  return Region{r.buffer, r.offset + offset, length};
}

Region block_region(Buffer buffer, const BlockLayout& layout, size_t i, size_t base) {
  Region r{buffer, base + layout.offsets[i], layout.lengths[i]};
  r.mark = Mark::block;
  r.block = static_cast<uint32_t>(i);
  return r;
}

Region block_span(Buffer buffer, const BlockLayout& layout, size_t first, size_t count) {
  if (count == 0 || first + count > layout.size() || count > UINT16_MAX)
    throw Error(Errc::internal, fmt::format("block_span of {} blocks from block {} of {}", count,
                                            first, layout.size()));
  Region r = block_region(buffer, layout, first);
  r.length = layout.span_length(first, first + count);
  r.span = static_cast<uint16_t>(count);
  return r;
}

Region sized_like(const Region& where, const Region& block) {
  if (where.mark != Mark::none || block.mark != Mark::block) {
    throw Error(Errc::internal, "sized_like needs an unmarked region and a block_region");
  }
  Region r{where.buffer, where.offset, block.length};
  r.mark = Mark::length;
  r.block = block.block;
  return r;
}

Plan::Plan(std::string algorithm) {
  builder_.schedule().algorithm = std::move(algorithm);
}

StepId Plan::message(sched::Kind kind, int peer, int channel, Region region, const Deps& after) {
  const int ch = ((channel % kChannels) + kChannels) % kChannels;
  std::vector<StepId> deps = after.ids();
  std::sort(deps.begin(), deps.end());
  deps.erase(std::unique(deps.begin(), deps.end()), deps.end());

  const auto key = std::make_tuple(peer, ch, kind == sched::Kind::send);
  auto tail = tails_.find(key);
  if (tail != tails_.end()) {
    // The earlier message is ready no later than this one if everything it
    // waits on, this one waits on too; otherwise order them explicitly.
    const std::vector<StepId>& earlier = tail->second.deps;
    const bool ordered = std::includes(deps.begin(), deps.end(), earlier.begin(), earlier.end());
    if (!ordered) {
      deps.insert(std::lower_bound(deps.begin(), deps.end(), tail->second.step), tail->second.step);
    }
  }

  sched::Step step;
  step.kind = kind;
  step.peer = peer;
  step.channel = static_cast<uint8_t>(ch);
  if (kind == sched::Kind::send)
    step.src = region;
  else
    step.dst = region;
  const StepId id = builder_.add(step, deps);
  tails_[key] = StreamTail{id, std::move(deps)};
  return id;
}

StepId Plan::send(int peer, int channel, Region src, const Deps& after) {
  return message(sched::Kind::send, peer, channel, src, after);
}

StepId Plan::recv(int peer, int channel, Region dst, const Deps& after) {
  return message(sched::Kind::recv, peer, channel, dst, after);
}

std::optional<StepId> Plan::copy(Region src, Region dst, const Deps& after) {
  if (src.length == 0) return std::nullopt;
  sched::Step step;
  step.kind = sched::Kind::copy;
  step.src = src;
  step.dst = dst;
  return builder_.add(step, after.ids());
}

std::optional<StepId> Plan::reduce(Region src, Region dst, const Deps& after) {
  if (src.length == 0) return std::nullopt;
  sched::Step step;
  step.kind = sched::Kind::reduce;
  step.src = src;
  step.dst = dst;
  return builder_.add(step, after.ids());
}

StepId Plan::join(const Deps& after) {
  sched::Step step;
  step.kind = sched::Kind::copy;
  step.src = output_region(0, 0);
  step.dst = output_region(0, 0);
  return builder_.add(step, after.ids());
}

Region Plan::take_scratch(size_t bytes) {
  sched::Schedule& s = builder_.schedule();
  const Region r = scratch_region(s.scratch_bytes, bytes);
  s.scratch_bytes += bytes;
  return r;
}

void Plan::set_reduction(Datatype type, ReduceOp op) {
  builder_.schedule().dtype = type;
  builder_.schedule().op = op;
}

void Plan::set_limits(uint32_t max_sends, uint32_t max_recvs) {
  builder_.schedule().max_sends = max_sends;
  builder_.schedule().max_recvs = max_recvs;
}

void Plan::set_symmetry(int rank, int size, int period, const BlockLayout& layout) {
  if (rank < 0 || rank >= size || period < 1 || size % period != 0 ||
      layout.size() != static_cast<size_t>(size)) {
    throw Error(Errc::internal,
                fmt::format("{}: symmetry of rank {} of {}, period {}, {} blocks is malformed",
                            builder_.schedule().algorithm, rank, size, period, layout.size()));
  }
  sched::Symmetry& sym = builder_.schedule().symmetry;
  sym.built_for = rank;
  sym.size = size;
  sym.period = period;
  sym.offsets = layout.offsets;
  sym.lengths = layout.lengths;
}

void Plan::set_rank_layout_symmetry(int rank, int size, const BlockLayout& input,
                                    const BlockLayout& output) {
  if (output.size() != input.size()) {
    throw Error(Errc::internal,
                fmt::format("{}: an input layout of {} blocks, an output's of {}",
                            builder_.schedule().algorithm, input.size(), output.size()));
  }
  set_symmetry(rank, size, 1, input);
  sched::Symmetry& sym = builder_.schedule().symmetry;
  sym.output_offsets = output.offsets;
  sym.output_lengths = output.lengths;
  sym.rank_layouts = true;
}

void Plan::set_shape_symmetry(int rank, int size, const BlockLayout& layout, uint64_t shape) {
  set_symmetry(rank, size, 1, layout);
  builder_.schedule().symmetry.shape = shape;
}

Deps Plan::all_steps() {
  Deps deps;
  const auto n = static_cast<StepId>(step_count());
  for (StepId id = 0; id < n; ++id)
    deps.add(id);
  return deps;
}

sched::Schedule Plan::finish() {
  return builder_.finish();
}

}  // namespace grove::coll
