#include "sched/step_graph.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "grove/error.hpp"
#include "sched/executor.hpp"
#include "sched/reduce.hpp"
#include "transport/tag.hpp"

namespace grove::sched {
namespace {

bool is_message(Kind kind) {
  return kind == Kind::send || kind == Kind::recv;
}

std::string_view buffer_name(Buffer b) {
  switch (b) {
    case Buffer::input:
      return "input";
    case Buffer::output:
      return "output";
    case Buffer::scratch:
      return "scratch";
  }
  return "?";
}

size_t index_of(Buffer b) {
  return static_cast<size_t>(b);
}

// The block layout of a symmetric schedule, reduced to what the summary needs.
struct LayoutBounds {
  size_t min_length = 0, max_length = 0, max_end = 0;
  size_t blocks = 0;
  explicit LayoutBounds(const Symmetry& sym, Buffer buffer)
      : blocks(sym.offsets_of(buffer).size()) {
    const std::vector<size_t>& offsets = sym.offsets_of(buffer);
    const std::vector<size_t>& lengths = sym.lengths_of(buffer);
    if (blocks == 0 || lengths.size() != blocks) return;
    min_length = *std::min_element(lengths.begin(), lengths.end());
    max_length = *std::max_element(lengths.begin(), lengths.end());
    for (size_t i = 0; i < blocks; ++i)
      max_end = std::max(max_end, offsets[i] + lengths[i]);
  }
};

// The lengths a region can have over all shifts: [low, high].
struct LengthRange {
  size_t low, high;
  bool single() const { return low == high; }
};

LengthRange lengths_of(const Region& r, const LayoutBounds& layout) {
  if (r.mark == Mark::none) return {r.length, r.length};
  const size_t span = r.mark == Mark::block ? r.span : 1;
  // A span of equal blocks has one length; otherwise bound it loosely.
  if (layout.min_length == layout.max_length)
    return {span * layout.min_length, span * layout.min_length};
  return {layout.min_length, span == 1 ? layout.max_length : layout.max_end};
}

// Whether two regions have equal lengths under every shift. Two one-block
// marks of the same block in different layouts (alltoallv's own block, input
// to output) are equal for a shift only where the layouts are: such blocks
// go to `unequal_layouts`, checked per shift (relabel_summary_admits).
bool equal_under_every_shift(const Region& a, const Region& b, const LayoutBounds* layouts,
                             bool same_layout, std::vector<uint32_t>& unequal_layouts) {
  const auto span = [](const Region& r) { return r.mark == Mark::block ? r.span : 1; };
  if (a.mark != Mark::none && b.mark != Mark::none && a.block == b.block && span(a) == span(b)) {
    if (same_layout) return true;
    if (span(a) != 1 || unequal_layouts.size() >= StepGraph::RelabelSummary::kUnequalKept)
      return false;
    unequal_layouts.push_back(a.block);
    return true;
  }
  const LengthRange la = lengths_of(a, layouts[index_of(a.buffer)]),
                    lb = lengths_of(b, layouts[index_of(b.buffer)]);
  return la.single() && lb.single() && la.low == lb.low;
}

StepGraph::RelabelSummary summarise(const Schedule& s) {
  StepGraph::RelabelSummary out;
  const Symmetry& sym = s.symmetry;
  const LayoutBounds layouts[3] = {LayoutBounds(sym, Buffer::input),
                                   LayoutBounds(sym, Buffer::output),
                                   LayoutBounds(sym, Buffer::scratch)};
  const LayoutBounds& layout = layouts[index_of(Buffer::input)];
  if (!sym.declared() || layout.blocks != static_cast<size_t>(sym.size) || layout.blocks == 0 ||
      layouts[index_of(Buffer::output)].blocks != layout.blocks)
    return out;
  const bool one_layout = sym.output_lengths.empty();
  if (s.max_sends == 0 || s.max_recvs == 0) return out;
  const size_t element = datatype_size(s.dtype);
  // A region's furthest byte under any shift, and whether it can be non-empty.
  auto reach = [&](const Region& r, bool written) {
    const LayoutBounds& bounds = layouts[index_of(r.buffer)];
    if (r.mark != Mark::none && r.block >= bounds.blocks) return false;
    if (written && r.buffer == Buffer::input) return false;
    const size_t b = index_of(r.buffer);
    if (r.mark == Mark::length && r.block == static_cast<uint32_t>(sym.built_for)) {
      out.own_offset[b] = std::max(out.own_offset[b], r.offset);
      out.own[b] = true;
    } else {
      size_t end = r.offset + r.length;
      if (r.mark == Mark::block)
        end = r.offset - sym.offsets_of(r.buffer)[r.block] + bounds.max_end;
      if (r.mark == Mark::length) end = r.offset + bounds.max_length;
      out.extent[b] = std::max(out.extent[b], end);
    }
    if (lengths_of(r, bounds).high > 0) out.used[index_of(r.buffer)] = true;
    return true;
  };
  for (StepId id = 0; id < s.steps.size(); ++id) {
    const Step& step = s.steps[id];
    if (step.deps_begin > step.deps_end || step.deps_end > s.deps.size()) return out;
    for (uint32_t d = step.deps_begin; d < step.deps_end; ++d)
      if (s.deps[d] >= id) return out;
    if (is_message(step.kind) &&
        (step.peer < 0 || step.peer >= sym.size || step.channel >= (1u << tag::kChannelBits)))
      return out;
    switch (step.kind) {
      case Kind::send:
        if (!reach(step.src, false)) return out;
        break;
      case Kind::recv:
        if (!reach(step.dst, true)) return out;
        break;
      case Kind::copy:
      case Kind::reduce:
        if (!reach(step.src, false) || !reach(step.dst, true)) return out;
        if (!equal_under_every_shift(step.src, step.dst, layouts,
                                     one_layout || (step.src.buffer == Buffer::output) ==
                                                       (step.dst.buffer == Buffer::output),
                                     out.unequal_layouts))
          return out;
        if (step.kind == Kind::reduce) {
          if (!reduce_op_valid(s.op, s.dtype)) return out;
          const LengthRange l = lengths_of(step.dst, layouts[index_of(step.dst.buffer)]);
          const std::vector<size_t>& lengths = sym.lengths_of(step.dst.buffer);
          if (step.dst.mark == Mark::none ? l.low % element != 0
                                          : std::any_of(lengths.begin(), lengths.end(),
                                                        [&](size_t x) { return x % element != 0; }))
            return out;
        }
        break;
    }
  }
  out.uniform = true;
  return out;
}

}  // namespace

StepGraph::StepGraph(const Schedule& s) {
  const size_t n = s.steps.size();
  initial.resize(n);
  dependents_begin.assign(n + 1, 0);
  dependents.resize(s.deps.size());
  for (StepId id = 0; id < n; ++id) {
    const Step& step = s.steps[id];
    // A malformed range is reported by validate_steps; count nothing for it.
    const bool sane = step.deps_begin <= step.deps_end && step.deps_end <= s.deps.size();
    initial[id] = sane ? step.deps_end - step.deps_begin : 0;
    if (sane)
      for (uint32_t d = step.deps_begin; d < step.deps_end; ++d)
        if (s.deps[d] < n) dependents_begin[s.deps[d] + 1]++;
    if (initial[id] == 0) roots.push_back(id);
    (step.kind == Kind::send ? sends : step.kind == Kind::recv ? recvs : locals)++;
  }
  initial_cells.resize(n);
  for (StepId id = 0; id < n; ++id) {
    initial_cells[id] = static_cast<uint8_t>(std::min(initial[id], kCapped));
    if (initial[id] >= kCapped) over_cap.push_back(id);
  }
  for (size_t i = 0; i < n; ++i)
    dependents_begin[i + 1] += dependents_begin[i];
  std::vector<uint32_t> fill(dependents_begin.begin(), dependents_begin.end() - 1);
  for (StepId id = 0; id < n; ++id) {
    const Step& step = s.steps[id];
    if (step.deps_begin > step.deps_end || step.deps_end > s.deps.size()) continue;
    for (uint32_t d = step.deps_begin; d < step.deps_end; ++d)
      if (s.deps[d] < n) dependents[fill[s.deps[d]]++] = id;
  }
  relabel = summarise(s);
}

namespace {

// The per-thread cache of graph_of. A Session destroyed at exit can run a
// last collective after this thread's thread_local objects are gone (their
// destructors run before the static ones): `graph_cache_gone`, trivially
// destructible, stays readable then, and graph_of stops caching.
thread_local bool graph_cache_gone = false;

struct GraphCache {
  // Keyed by the schedule's control block (a weak reference), so a schedule
  // freed and another allocated at its address never hits a stale entry.
  struct Entry {
    std::weak_ptr<const Schedule> schedule;
    std::shared_ptr<const StepGraph> graph;
  };
  static constexpr size_t kKept = 4;
  std::array<Entry, kKept> entries;
  size_t next = 0;
  ~GraphCache() { graph_cache_gone = true; }
};

}  // namespace

std::shared_ptr<const StepGraph> graph_of(const std::shared_ptr<const Schedule>& schedule) {
  if (graph_cache_gone) return std::make_shared<const StepGraph>(*schedule);
  thread_local GraphCache cache;
  for (GraphCache::Entry& e : cache.entries) {
    if (!e.graph) continue;
    if (!e.schedule.owner_before(schedule) && !schedule.owner_before(e.schedule) &&
        !e.schedule.expired())
      return e.graph;
  }
  auto graph = std::make_shared<const StepGraph>(*schedule);
  cache.entries[cache.next] = GraphCache::Entry{schedule, graph};
  cache.next = (cache.next + 1) % GraphCache::kKept;
  return graph;
}

void validate_steps(const Schedule& s, int shift, const ValidationTarget& t) {
  const Buffers& b = *t.buffers;
  if (s.max_sends == 0 || s.max_recvs == 0) {
    throw Error(
        Errc::invalid_argument,
        fmt::format("rank {} {}: max_sends and max_recvs must be at least 1", t.rank, s.algorithm));
  }
  const Symmetry& sym = s.symmetry;
  if (shift != 0 && !sym.output_lengths.empty() &&
      (sym.output_offsets.size() != sym.offsets.size() ||
       sym.output_lengths.size() != sym.lengths.size())) {
    throw Error(Errc::invalid_argument,
                fmt::format("rank {} {}: the output layout has {} blocks, the input's {}", t.rank,
                            s.algorithm, sym.output_lengths.size(), sym.lengths.size()));
  }
  auto where = [&](StepId id, const Step& step) {
    return fmt::format("rank {} {}: step {} ({})", t.rank,
                       s.algorithm.empty() ? "schedule" : s.algorithm, id, describe_step(step));
  };
  auto buffer_length = [&](Buffer which) {
    switch (which) {
      case Buffer::input:
        return b.input_length;
      case Buffer::output:
        return b.output_length;
      case Buffer::scratch:
        return s.scratch_bytes;
    }
    return size_t{0};
  };
  auto check_region = [&](StepId id, const Step& step, const Region& r, std::string_view role,
                          bool written) {
    const size_t length = buffer_length(r.buffer);
    auto bad = [&](const std::string& cause) {
      throw Error(Errc::invalid_argument,
                  fmt::format("{}: {} region: {}", where(id, step), role, cause));
    };
    if (written && r.buffer == Buffer::input) bad("writes the read-only input buffer");
    if (r.offset > length || r.length > length - r.offset) {
      bad(fmt::format("[{}, +{}) exceeds the {}-byte {} buffer", r.offset, r.length, length,
                      buffer_name(r.buffer)));
    }
    const bool missing = r.buffer == Buffer::input    ? b.input == nullptr
                         : r.buffer == Buffer::output ? b.output == nullptr
                                                      : false;
    if (t.payload && missing && r.length > 0)
      bad(fmt::format("the {} buffer is null", buffer_name(r.buffer)));
  };
  for (StepId id = 0; id < s.steps.size(); ++id) {
    const Step& raw = s.steps[id];
    if (raw.deps_begin > raw.deps_end || raw.deps_end > s.deps.size()) {
      throw Error(Errc::invalid_argument,
                  fmt::format("{}: dependency range out of bounds", where(id, raw)));
    }
    for (uint32_t d = raw.deps_begin; d < raw.deps_end; ++d) {
      if (s.deps[d] >= id) {
        throw Error(Errc::invalid_argument,
                    fmt::format("{}: depends on later step {}", where(id, raw), s.deps[d]));
      }
    }
    if (is_message(raw.kind) && (raw.peer < 0 || raw.peer >= t.size)) {
      throw Error(Errc::invalid_argument,
                  fmt::format("{}: peer {} is outside [0, {})", where(id, raw), raw.peer, t.size));
    }
    const Step step = relabel_step(s, raw, shift);
    if (is_message(step.kind) && step.channel >= (1u << tag::kChannelBits)) {
      throw Error(Errc::invalid_argument,
                  fmt::format("{}: channel {} does not fit in {} tag bits", where(id, step),
                              step.channel, tag::kChannelBits));
    }
    switch (step.kind) {
      case Kind::send:
        check_region(id, step, step.src, "source", false);
        break;
      case Kind::recv:
        check_region(id, step, step.dst, "destination", true);
        break;
      case Kind::copy:
      case Kind::reduce:
        check_region(id, step, step.src, "source", false);
        check_region(id, step, step.dst, "destination", true);
        if (step.src.length != step.dst.length) {
          throw Error(Errc::invalid_argument,
                      fmt::format("{}: source is {} bytes but destination is {}", where(id, step),
                                  step.src.length, step.dst.length));
        }
        if (step.kind == Kind::reduce) {
          if (!reduce_op_valid(s.op, s.dtype)) {
            throw Error(Errc::invalid_argument,
                        fmt::format("{}: {} is not defined on {}", where(id, step),
                                    reduce_op_name(s.op), datatype_name(s.dtype)));
          }
          if (step.dst.length % datatype_size(s.dtype) != 0) {
            throw Error(Errc::invalid_argument,
                        fmt::format("{}: {} bytes is not a whole number of {} elements",
                                    where(id, step), step.dst.length, datatype_name(s.dtype)));
          }
        }
        break;
    }
  }
}

bool relabel_summary_admits(const StepGraph& graph, const Schedule& s, const ValidationTarget& t) {
  const StepGraph::RelabelSummary& sum = graph.relabel;
  if (!sum.uniform || t.size != s.symmetry.size) return false;
  const Symmetry& sym = s.symmetry;
  const int shift = sym.shift_of(t.rank);
  if (shift < 0) return false;
  for (const uint32_t block : sum.unequal_layouts) {
    const size_t moved = (block + static_cast<size_t>(shift)) % sym.lengths.size();
    if (sym.lengths[moved] != sym.output_lengths[moved]) return false;
  }
  // The schedule's own block as the running rank has it (a Mark::length
  // region is as long as the block in its buffer's layout).
  const size_t own_block =
      (static_cast<size_t>(sym.built_for) + static_cast<size_t>(shift)) % sym.lengths.size();
  const Buffers& b = *t.buffers;
  const size_t lengths[3] = {b.input_length, b.output_length, s.scratch_bytes};
  const bool null[3] = {b.input == nullptr, b.output == nullptr, false};
  for (size_t i = 0; i < 3; ++i) {
    if (sum.extent[i] > lengths[i]) return false;
    if (sum.own[i] &&
        sum.own_offset[i] + sym.lengths_of(static_cast<Buffer>(i))[own_block] > lengths[i])
      return false;
    if (t.payload && null[i] && sum.used[i]) return false;
  }
  return true;
}

}  // namespace grove::sched
