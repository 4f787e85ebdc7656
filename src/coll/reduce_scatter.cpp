#include "coll/reduce_scatter.hpp"

#include <fmt/format.h>

#include "coll/checks.hpp"
#include "coll/halving_steps.hpp"
#include "coll/plan.hpp"
#include "grove/error.hpp"

namespace grove::coll {
namespace {

[[maybe_unused]] const bool registered = [] {
  register_algorithms(
      "reduce_scatter",
      {
          {"ring", 0, 2, 1 << 20, false, "N-1 steps around the ring", ""},
          {"recursive_halving", 0, 2, 1 << 20, false, "log2 steps halving the block range", ""},
      });
  return true;
}();

constexpr size_t kLongBytes = 524288;  // MODELS.md §2

void build_ring(Plan& plan, const ReduceScatterArgs& a, size_t b) {
  const int n = a.size;
  const int r = a.rank;
  auto block = [&](int i) { return input_region(static_cast<size_t>(((i % n) + n) % n) * b, b); };
  const Region result = output_region(0, b);
  if (n == 1) {
    plan.copy(block(0), result);
    return;
  }
  // Partials travel in two scratch buffers in turn. At step s rank r sends
  // its partial of block r - s - 1 (at step 0 its own input block) and
  // receives the left neighbour's partial of block r - s - 2, folding its
  // own input in; the last step's block is r itself and lands in the output.
  const Region buffers[2] = {plan.take_scratch(b), plan.take_scratch(b)};
  const int right = (r + 1) % n;
  const int left = (r + n - 1) % n;
  std::optional<StepId> reduced;  // the partial sent next
  std::optional<StepId> sent;
  for (int s = 0; s + 1 < n; ++s) {
    const Region outgoing = s == 0 ? block(r - 1) : buffers[(s - 1) % 2];
    const StepId send = plan.send(right, s, outgoing, Deps().add(reduced));
    const bool last = s + 2 == n;
    const Region incoming = last ? result : buffers[s % 2];
    // buffers[s % 2] was last read by the previous step's send.
    const StepId got = plan.recv(left, s, incoming, Deps().add(sent));
    reduced = plan.reduce(block(r - s - 2), incoming, {got});
    sent = send;
  }
}

void build_recursive_halving(Plan& plan, const ReduceScatterArgs& a, size_t b) {
  const int n = a.size;
  const int r = a.rank;
  const size_t total = b * static_cast<size_t>(n);
  const Region result = output_region(0, b);
  if (n == 1) {
    plan.copy(input_region(0, b), result);
    return;
  }
  const Fold fold(n);
  const Ranks ranks{0, n};
  const int last_channel = 1 + fold.steps;
  const Region mine = input_region(0, total);
  if (fold.sits_out(r)) {
    const Phase sent = fold_in(plan, fold, ranks, r, mine, {}, {}, 0, {});
    fold_out(plan, fold, ranks, r, {}, result, last_channel, {}, sent.all);
    return;
  }
  // The accumulator starts as a copy of the input (which is read-only).
  const Region acc = plan.take_scratch(total);
  const Region incoming = plan.take_scratch(total);
  const Deps copied = Deps().add(plan.copy(mine, acc));
  const Phase folded = fold_in(plan, fold, ranks, r, mine, acc, incoming, 0, copied);
  // Virtual rank v's chunk is the blocks of the real ranks it stands for.
  std::vector<size_t> lengths(static_cast<size_t>(fold.p2));
  for (int v = 0; v < fold.p2; ++v)
    lengths[static_cast<size_t>(v)] =
        static_cast<size_t>(fold.end_real(v) - fold.first_real(v)) * b;
  const BlockLayout chunks = BlockLayout::packed(std::move(lengths));
  const int v = fold.virtual_of(r);
  const Phase halved = recursive_halving(plan, fold, ranks, v, chunks, acc, incoming, 1,
                                         Deps(copied).add(folded.done));
  plan.copy(sub_region(acc, static_cast<size_t>(r) * b, b), result, halved.done);
  if (fold.absorbs(r)) {
    fold_out(plan, fold, ranks, r, sub_region(acc, static_cast<size_t>(r + 1) * b, b), {},
             last_channel, halved.done, {});
  }
}

}  // namespace

AlgorithmSpec choose_reduce_scatter_auto(int size, size_t count, Datatype dtype) {
  if (count * datatype_size(dtype) * static_cast<size_t>(size) < kLongBytes)
    return parse_algorithm("reduce_scatter", "recursive_halving");
  return parse_algorithm("reduce_scatter", "ring");
}

AlgorithmSpec resolve_reduce_scatter(const AlgorithmSpec& spec, int size, size_t count,
                                     Datatype dtype) {
  return spec.is_auto() ? choose_reduce_scatter_auto(size, count, dtype) : spec;
}

sched::Schedule build_reduce_scatter(const ReduceScatterArgs& a) {
  check_rank("reduce_scatter", a.rank, a.size);
  check_spec("reduce_scatter", a.algorithm);
  check_reduction("reduce_scatter", a.dtype, a.op);
  const AlgorithmSpec spec = resolve_reduce_scatter(a.algorithm, a.size, a.count, a.dtype);
  Plan plan("reduce_scatter " + spec.to_string());
  plan.set_reduction(a.dtype, a.op);
  const size_t b = a.count * datatype_size(a.dtype);
  if (b == 0) return plan.finish();
  if (spec.name == "ring") {
    build_ring(plan, a, b);
  } else if (spec.name == "recursive_halving") {
    build_recursive_halving(plan, a, b);
  } else {
    throw Error(Errc::internal,
                fmt::format("reduce_scatter: no builder for algorithm '{}'", spec.name));
  }
  return plan.finish();
}

}  // namespace grove::coll
