#include "coll/reduce_scatter.hpp"

#include <fmt/format.h>

#include "coll/checks.hpp"
#include "coll/halving_steps.hpp"
#include "coll/registry.hpp"
#include "grove/error.hpp"

namespace grove::coll {
namespace {

void build_reduce_scatter_ring(Plan& plan, const ReduceScatterArgs& a, size_t b) {
  const int n = a.size;
  const int r = a.rank;
  const BlockLayout blocks = BlockLayout::uniform(n, b);
  auto block = [&](int i) {
    return block_region(Buffer::input, blocks, static_cast<size_t>(((i % n) + n) % n));
  };
  const Region result = output_region(0, b);
  if (n == 1) {
    plan.copy(block(0), result);
    return;
  }
  // Every rank runs the same steps, one block further along.
  plan.set_symmetry(r, n, 1, blocks);
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

void build_reduce_scatter_halving(Plan& plan, const ReduceScatterArgs& a, size_t b) {
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

const AlgorithmTable<ReduceScatterArgs> kReduceScatterAlgorithms{
    Collective::reduce_scatter,
    {
        {{.name = "ring",
          .doc = "N-1 steps around the ring",
          .cost = closed_form("(P-1) (u(m) + L), m = one block",
                              "(p-1)a + n(p-1)/p (b+g) [MPICH, pairwise]", cost::always, 0, false,
                              [](const CostCase& c, const PortModel& m) {
                                return (c.ranks - 1) * (m.u(c.bytes) + m.l(c.bytes));
                              })},
         [](Plan& p, const ReduceScatterArgs& a, const AlgorithmSpec&) {
           build_reduce_scatter_ring(p, a, a.count * datatype_size(a.dtype));
         }},
        {{.name = "recursive_halving",
          .doc = "log2 steps halving the block range",
          .cost = closed_form(
              "sum_{i=1}^{log2 P} (u(ceil(P / 2^i) m) + L); other P: + (u(P m) + L) to fold and "
              "(u(m) + L) to hand a block back",
              "lgp a + n(p-1)/p (b+g) [MPICH]", cost::power_of_two, 0.4, true,
              [](const CostCase& c, const PortModel& m) {
                const int p2 = 1 << cost::floor_log2(c.ranks);
                double t = 0;
                for (int64_t part = 2; part <= p2; part *= 2) {
                  const double sent = std::ceil(static_cast<double>(c.ranks) / part) * c.bytes;
                  t += m.u(sent) + m.l(sent);
                }
                if (p2 != c.ranks)
                  t +=
                      m.u(c.ranks * c.bytes) + m.l(c.ranks * c.bytes) + m.u(c.bytes) + m.l(c.bytes);
                return t;
              })},
         [](Plan& p, const ReduceScatterArgs& a, const AlgorithmSpec&) {
           build_reduce_scatter_halving(p, a, a.count * datatype_size(a.dtype));
         }},
    }};

}  // namespace

CallFacts facts(const ReduceScatterArgs& a) {
  const uint64_t block = a.count * datatype_size(a.dtype);
  return CallFacts{.collective = Collective::reduce_scatter,
                   .ranks = a.size,
                   .bytes = block,
                   .total = block * static_cast<uint64_t>(a.size),
                   .count = a.count};
}

sched::Schedule build_reduce_scatter(const ReduceScatterArgs& a) {
  check_rank("reduce_scatter", a.rank, a.size);
  check_spec("reduce_scatter", a.algorithm);
  check_reduction("reduce_scatter", a.dtype, a.op);
  const AlgorithmSpec spec = resolve(facts(a), a.algorithm);
  Plan plan("reduce_scatter " + spec.to_string());
  plan.set_reduction(a.dtype, a.op);
  if (a.count * datatype_size(a.dtype) == 0) return plan.finish();
  kReduceScatterAlgorithms.build(plan, a, spec);
  return plan.finish();
}

}  // namespace grove::coll
