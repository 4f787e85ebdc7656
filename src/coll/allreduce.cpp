#include "coll/allreduce.hpp"

#include <cmath>

#include <fmt/format.h>

#include "coll/checks.hpp"
#include "coll/halving_steps.hpp"
#include "coll/hierarchical.hpp"
#include "coll/registry.hpp"
#include "coll/ring_steps.hpp"
#include "coll/shm/collectives.hpp"
#include "grove/error.hpp"

namespace grove::coll {
namespace {

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
  // With no empty chunk every rank runs the same steps, one chunk further
  // along (empty chunks are skipped, which depends on the rank).
  if (chunks.lengths.back() > 0) plan.set_symmetry(r, n, 1, chunks);
  auto chunk = [&](int i) {
    return block_region(Buffer::output, chunks, static_cast<size_t>(((i % n) + n) % n));
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
      const Region buffer = sized_like(buffers[step % 2], in_chunk);
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

const AlgorithmTable<AllreduceArgs> kAllreduceAlgorithms{
    Collective::allreduce,
    {
        {{.name = "recursive_doubling",
          .doc = "log2 steps exchanging the whole vector",
          .cost = closed_form("log2(P) (u(n) + L); other P: + 2 (u(n) + L) (fold, unfold)",
                              "lgp(a + nb + ng) [MPICH]", cost::power_of_two, 0.4, false,
                              [](const CostCase& c, const PortModel& m) {
                                const int d = cost::floor_log2(c.ranks);
                                const bool fold = (1 << d) != c.ranks;
                                return (d + (fold ? 2 : 0)) * (m.u(c.bytes) + m.l(c.bytes));
                              })},
         [](Plan& p, const AllreduceArgs& a, const AlgorithmSpec&) {
           build_recursive_doubling(p, a, a.count * datatype_size(a.dtype));
         }},
        {{.name = "ring",
          .doc = "ring reduce-scatter, then ring allgather",
          .cost = closed_form(
              "2 (P-1) (u(ceil(n/P)) + L)",
              "(p-1)a + n(p-1)/p b twice (reduce-scatter + allgather) [MPICH]",
              [](const CostCase& c) { return std::fmod(c.bytes, c.ranks) == 0; }, 0.05, false,
              [](const CostCase& c, const PortModel& m) {
                const double chunk = std::ceil(c.bytes / c.ranks);
                return 2 * (c.ranks - 1) * (m.u(chunk) + m.l(chunk));
              })},
         [](Plan& p, const AllreduceArgs& a, const AlgorithmSpec&) {
           build_ring(p, a, a.count * datatype_size(a.dtype));
         }},
        {{.name = "rabenseifner",
          .doc = "recursive-halving reduce-scatter, then recursive-doubling allgather",
          .cost = closed_form(
              "2 sum_{i=1}^{log2 P} (u(n / 2^i) + L); other P: + 2 (u(n) + L) (fold, "
              "unfold)",
              "2lgp a + 2n(p-1)/p b + n(p-1)/p g [MPICH]", cost::even_split, 0.3, true,
              [](const CostCase& c, const PortModel& m) {
                const int p2 = 1 << cost::floor_log2(c.ranks);
                const double fold = p2 == c.ranks ? 0 : 2 * (m.u(c.bytes) + m.l(c.bytes));
                return fold + 2 * cost::halving(p2, c.bytes, m);
              })},
         [](Plan& p, const AllreduceArgs& a, const AlgorithmSpec&) {
           build_rabenseifner(p, a, a.count * datatype_size(a.dtype));
         }},
        {shm::algorithm(Collective::allreduce), nullptr},
        {hierarchical_algorithm(), nullptr},
    }};

}  // namespace

CallFacts facts(const AllreduceArgs& a) {
  const uint64_t bytes = a.count * datatype_size(a.dtype);
  return CallFacts{.collective = Collective::allreduce,
                   .ranks = a.size,
                   .bytes = bytes,
                   .total = bytes,
                   .count = a.count};
}

sched::Schedule build_allreduce(const AllreduceArgs& a) {
  check_rank("allreduce", a.rank, a.size);
  check_spec("allreduce", a.algorithm);
  check_reduction("allreduce", a.dtype, a.op);
  const AlgorithmSpec spec = resolve(facts(a), a.algorithm);
  Plan plan("allreduce " + spec.to_string());
  plan.set_reduction(a.dtype, a.op);
  if (a.count * datatype_size(a.dtype) == 0) return plan.finish();
  kAllreduceAlgorithms.build(plan, a, spec);
  return plan.finish();
}

}  // namespace grove::coll
