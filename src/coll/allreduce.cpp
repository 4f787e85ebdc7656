#include "coll/allreduce.hpp"

#include <fmt/format.h>

#include "coll/checks.hpp"
#include "coll/halving_steps.hpp"
#include "coll/plan.hpp"
#include "coll/ring_steps.hpp"
#include "grove/error.hpp"

namespace grove::coll {
namespace {

[[maybe_unused]] const bool registered = [] {
  register_algorithms(
      "allreduce",
      {
          {"recursive_doubling", 0, 2, 1 << 20, false, "log2 steps exchanging the whole vector",
           ""},
          {"ring", 0, 2, 1 << 20, false, "ring reduce-scatter, then ring allgather", ""},
          {"rabenseifner", 0, 2, 1 << 20, false,
           "recursive-halving reduce-scatter, then recursive-doubling allgather", ""},
      });
  return true;
}();

constexpr size_t kShortBytes = 2048;  // MODELS.md §2

// Every algorithm accumulates in the output.
struct Start {
  Region mine;  // this rank's contribution as given
  Region acc;
  Deps ready;
};

Start start(Plan& plan, const AllreduceArgs& a, size_t bytes) {
  Start s;
  s.acc = output_region(0, bytes);
  s.mine = a.in_place ? s.acc : input_region(0, bytes);
  if (!a.in_place) s.ready.add(plan.copy(s.mine, s.acc));
  return s;
}

void build_recursive_doubling(Plan& plan, const AllreduceArgs& a, size_t bytes) {
  const Fold fold(a.size);
  const Ranks ranks{0, a.size};
  const int last_channel = 1 + fold.steps;
  const Start s = start(plan, a, bytes);
  if (fold.sits_out(a.rank)) {
    const Phase sent = fold_in(plan, fold, ranks, a.rank, s.mine, s.acc, {}, 0, {});
    fold_out(plan, fold, ranks, a.rank, {}, s.acc, last_channel, {}, Deps(sent.all).add(s.ready));
    return;
  }
  const Region buffers[2] = {plan.take_scratch(bytes), plan.take_scratch(bytes)};
  const Phase folded = fold_in(plan, fold, ranks, a.rank, s.mine, s.acc, buffers[1], 0, s.ready);
  const int v = fold.virtual_of(a.rank);
  Deps ready = Deps(s.ready).add(folded.done);
  std::optional<StepId> reduced[2];
  for (int t = 0; t < fold.steps; ++t) {
    const int peer = fold.real_of(v ^ (1 << t));
    const Region buffer = buffers[t % 2];
    const StepId sent = plan.send(peer, 1 + t, s.acc, ready);
    // The buffer was last read by the reduce two steps back (or the fold's).
    const StepId got =
        plan.recv(peer, 1 + t, buffer, t < 2 ? Deps(folded.all) : Deps().add(reduced[t % 2]));
    // acc is the send's source: reduce into it once the send completed.
    reduced[t % 2] = plan.reduce(buffer, s.acc, Deps(ready).add(got).add(sent));
    ready = Deps().add(reduced[t % 2]);
  }
  fold_out(plan, fold, ranks, a.rank, s.acc, {}, last_channel, ready, {});
}

void build_ring(Plan& plan, const AllreduceArgs& a, size_t bytes) {
  const int n = a.size;
  const int r = a.rank;
  const Start s = start(plan, a, bytes);
  if (n == 1) return;
  const BlockLayout chunks = BlockLayout::split(a.count, datatype_size(a.dtype), n);
  auto chunk = [&](int i) {
    const auto c = static_cast<size_t>(((i % n) + n) % n);
    return output_region(chunks.offsets[c], chunks.lengths[c]);
  };
  const Region buffers[2] = {plan.take_scratch(chunks.max_length()),
                             plan.take_scratch(chunks.max_length())};
  // Reduce-scatter: at step s rank r sends its partial of chunk r - s and
  // folds the left neighbour's partial of chunk r - s - 1 into its own;
  // after N-1 steps it holds chunk r + 1 complete.
  const int right = (r + 1) % n;
  const int left = (r + n - 1) % n;
  std::optional<StepId> reduced_prev;  // wrote chunk r - s, sent at step s
  std::optional<StepId> reduced[2];
  Deps sends;
  for (int step = 0; step + 1 < n; ++step) {
    const Region out_chunk = chunk(r - step);
    const Region in_chunk = chunk(r - step - 1);
    if (out_chunk.length > 0)
      sends.add(plan.send(right, step, out_chunk, Deps(s.ready).add(reduced_prev)));
    std::optional<StepId> reduced_now;
    if (in_chunk.length > 0) {
      const Region buffer = sub_region(buffers[step % 2], 0, in_chunk.length);
      const StepId got = plan.recv(left, step, buffer, Deps().add(reduced[step % 2]));
      reduced_now = plan.reduce(buffer, in_chunk, Deps(s.ready).add(got));
      reduced[step % 2] = reduced_now;
    }
    reduced_prev = reduced_now;
  }
  // Allgather: rank r starts with chunk r + 1; receives overwrite chunks
  // this rank sent during the reduce-scatter.
  const StepId scattered = plan.join(Deps(sends).add(reduced_prev).add(s.ready));
  ring_allgather(plan, r, n, chunks, 1, chunk(r + 1), n - 1, Deps{scattered});
}

void build_rabenseifner(Plan& plan, const AllreduceArgs& a, size_t bytes) {
  const Fold fold(a.size);
  const Ranks ranks{0, a.size};
  const int last_channel = 1 + 2 * fold.steps;
  const Start s = start(plan, a, bytes);
  if (fold.sits_out(a.rank)) {
    const Phase sent = fold_in(plan, fold, ranks, a.rank, s.mine, s.acc, {}, 0, {});
    fold_out(plan, fold, ranks, a.rank, {}, s.acc, last_channel, {}, Deps(sent.all).add(s.ready));
    return;
  }
  const Region incoming = plan.take_scratch(bytes);
  const Phase folded = fold_in(plan, fold, ranks, a.rank, s.mine, s.acc, incoming, 0, s.ready);
  const int v = fold.virtual_of(a.rank);
  const BlockLayout chunks = BlockLayout::split(a.count, datatype_size(a.dtype), fold.p2);
  const Phase halved = recursive_halving(plan, fold, ranks, v, chunks, s.acc, incoming, 1,
                                         Deps(s.ready).add(folded.done));
  const Phase gathered = doubling_allgather(plan, fold, ranks, v, chunks, s.acc, 1 + fold.steps,
                                            halved.done, halved.sends);
  fold_out(plan, fold, ranks, a.rank, s.acc, {}, last_channel, gathered.done, {});
}

}  // namespace

AlgorithmSpec choose_allreduce_auto(int size, size_t count, Datatype dtype) {
  const Fold fold(size);
  if (count * datatype_size(dtype) <= kShortBytes || count < static_cast<size_t>(fold.p2))
    return parse_algorithm("allreduce", "recursive_doubling");
  return parse_algorithm("allreduce", "rabenseifner");
}

AlgorithmSpec resolve_allreduce(const AlgorithmSpec& spec, int size, size_t count, Datatype dtype) {
  return spec.is_auto() ? choose_allreduce_auto(size, count, dtype) : spec;
}

sched::Schedule build_allreduce(const AllreduceArgs& a) {
  check_rank("allreduce", a.rank, a.size);
  check_spec("allreduce", a.algorithm);
  check_reduction("allreduce", a.dtype, a.op);
  const AlgorithmSpec spec = resolve_allreduce(a.algorithm, a.size, a.count, a.dtype);
  Plan plan("allreduce " + spec.to_string());
  plan.set_reduction(a.dtype, a.op);
  const size_t bytes = a.count * datatype_size(a.dtype);
  if (bytes == 0) return plan.finish();
  if (spec.name == "recursive_doubling") {
    build_recursive_doubling(plan, a, bytes);
  } else if (spec.name == "ring") {
    build_ring(plan, a, bytes);
  } else if (spec.name == "rabenseifner") {
    build_rabenseifner(plan, a, bytes);
  } else {
    throw Error(Errc::internal, fmt::format("allreduce: no builder for algorithm '{}'", spec.name));
  }
  return plan.finish();
}

}  // namespace grove::coll
