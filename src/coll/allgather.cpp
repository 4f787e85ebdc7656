#include "coll/allgather.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "coll/checks.hpp"
#include "coll/hierarchical.hpp"
#include "coll/layout.hpp"
#include "coll/registry.hpp"
#include "coll/ring_steps.hpp"
#include "coll/shm/collectives.hpp"
#include "coll/tree_steps.hpp"
#include "core/params.hpp"
#include "grove/error.hpp"

namespace grove::coll {
namespace {

const params::IntParam rollup_radix_param{
    "rollup_radix", 64, 2, 1 << 20,
    "radix of the k-ary gather (rollup) tree of allgather/allgatherv gather_bcast and the fence "
    "(the fence's default, docs/fence.md)"};
const params::IntParam release_radix_param{
    "release_radix", 4, 2, 1 << 20,
    "radix of the k-ary bcast (release) tree of allgather/allgatherv gather_bcast and the fence "
    "(the fence's default; docs/release-radix.md)"};

size_t wrap(int64_t i, int n) {
  return static_cast<size_t>(((i % n) + n) % n);
}

// The output slot of this rank's block (marked: it moves with the rank).
Region own_slot(const AllgatherArgs& a) {
  Region r = output_region(static_cast<size_t>(a.rank) * a.block_bytes, a.block_bytes);
  r.mark = Mark::block;
  r.block = static_cast<uint32_t>(a.rank);
  return r;
}

// Where this rank's block starts, and the output slot it must end in.
Region own_block(const AllgatherArgs& a) {
  return a.in_place ? own_slot(a) : input_region(0, a.block_bytes);
}

// Copies the own block into its output slot (nothing when in place).
std::optional<StepId> place_own(Plan& plan, const AllgatherArgs& a) {
  if (a.in_place) return std::nullopt;
  return plan.copy(own_block(a), own_slot(a));
}

void ring(Plan& plan, const AllgatherArgs& a, const AlgorithmSpec&) {
  if (a.block_bytes == 0) return;
  const BlockLayout layout = BlockLayout::uniform(a.size, a.block_bytes);
  // Every rank runs the same steps, one block further along.
  plan.set_symmetry(a.rank, a.size, 1, layout);
  place_own(plan, a);
  ring_allgather(plan, a.rank, a.size, layout, 0, own_block(a), 0);
}

void recursive_doubling(Plan& plan, const AllgatherArgs& a, const AlgorithmSpec&) {
  const size_t b = a.block_bytes;
  if (b == 0) return;
  const Fold fold(a.size);
  const int r = a.rank;
  const int last_channel = fold.steps + 1;
  const Region everything = output_region(0, static_cast<size_t>(a.size) * b);
  const auto placed = place_own(plan, a);

  if (fold.sits_out(r)) {
    // Hand the block to the even partner; receive the whole result from it.
    const StepId sent = plan.send(r - 1, 0, own_block(a));
    plan.recv(r - 1, last_channel, everything, Deps{sent}.add(placed));
    return;
  }
  Deps have;
  have.add(placed);
  if (fold.absorbs(r)) have.add(plan.recv(r + 1, 0, output_region((r + 1) * b, b)));

  // Virtual rank v holds the blocks of an aligned group of 2^k virtual
  // ranks after step k; the real blocks of a virtual range are contiguous.
  const int v = fold.virtual_of(r);
  auto group_bytes = [&](int first_v, int count) {
    const size_t begin = static_cast<size_t>(fold.first_real(first_v)) * b;
    const size_t end = static_cast<size_t>(fold.end_real(first_v + count - 1)) * b;
    return output_region(begin, end - begin);
  };
  for (int k = 0; k < fold.steps; ++k) {
    const int mask = 1 << k;
    const int partner_v = v ^ mask;
    const int partner = fold.real_of(partner_v);
    const StepId got = plan.recv(partner, 1 + k, group_bytes(partner_v & ~(mask - 1), mask));
    plan.send(partner, 1 + k, group_bytes(v & ~(mask - 1), mask), have);
    have.add(got);
  }
  if (fold.absorbs(r)) plan.send(r + 1, last_channel, everything, have);
}

void bruck(Plan& plan, const AllgatherArgs& a, const AlgorithmSpec&) {
  const size_t b = a.block_bytes;
  const int n = a.size;
  if (b == 0) return;
  Deps have;
  have.add(place_own(plan, a));
  // Blocks [first, first + count) mod N as at most two contiguous ranges.
  auto pieces = [&](int64_t first, int count) {
    std::vector<Region> out;
    const size_t start = wrap(first, n);
    const size_t head =
        std::min<size_t>(static_cast<size_t>(count), static_cast<size_t>(n) - start);
    out.push_back(output_region(start * b, head * b));
    if (head < static_cast<size_t>(count))
      out.push_back(output_region(0, (static_cast<size_t>(count) - head) * b));
    return out;
  };
  // After step k rank r holds blocks [r, r + 2^(k+1)) mod N. At step k it
  // sends the first min(2^k, N - 2^k) of them to r - 2^k and receives as
  // many, starting at block r + 2^k, from r + 2^k.
  for (int k = 0; (int64_t{1} << k) < n; ++k) {
    const int d = 1 << k;
    const int count = std::min(d, n - d);
    const int to = static_cast<int>(wrap(a.rank - d, n));
    const int from = static_cast<int>(wrap(a.rank + d, n));
    const std::vector<Region> incoming = pieces(a.rank + d, count);
    const std::vector<Region> outgoing = pieces(a.rank, count);
    Deps got;
    for (size_t i = 0; i < incoming.size(); ++i)
      got.add(plan.recv(from, 2 * k + static_cast<int>(i), incoming[i]));
    for (size_t i = 0; i < outgoing.size(); ++i) {
      // Step 0 sends the own block straight from where it starts.
      const Region src = k == 0 ? own_block(a) : outgoing[i];
      plan.send(to, 2 * k + static_cast<int>(i), src, have);
    }
    have.add(got);
  }
}

void neighbor_exchange(Plan& plan, const AllgatherArgs& a, const AlgorithmSpec&) {
  const int n = a.size;
  if (n % 2 != 0 && n > 1) {
    throw Error(
        Errc::invalid_argument,
        fmt::format("allgather neighbor_exchange needs an even number of ranks, not {}", n));
  }
  const size_t b = a.block_bytes;
  const int r = a.rank;
  if (b == 0) return;
  const auto placed = place_own(plan, a);
  if (n == 1) return;
  const BlockLayout layout = BlockLayout::uniform(n, b);
  // Ranks of one parity run the same steps, two blocks further along per
  // two ranks (the pairs moved start at even blocks: they never wrap).
  plan.set_symmetry(r, n, 2, layout);
  auto blocks = [&](int first, int count) {
    return block_span(Buffer::output, layout, static_cast<size_t>(first),
                      static_cast<size_t>(count));
  };
  // Even ranks first talk to the right, odd ranks to the left; each then
  // alternates. `from[p]` is the first block of the pair expected next from
  // neighbour p, moving two blocks per exchange with that neighbour.
  const bool even = r % 2 == 0;
  const int neighbor[2] = {static_cast<int>(wrap(r + (even ? 1 : -1), n)),
                           static_cast<int>(wrap(r + (even ? -1 : 1), n))};
  const int step_of[2] = {even ? 2 : -2, even ? -2 : 2};
  int from[2] = {even ? r : neighbor[0], even ? r : neighbor[0]};

  // Step 0: swap single blocks with neighbour 0.
  StepId arrived = plan.recv(neighbor[0], 0, blocks(neighbor[0], 1));
  plan.send(neighbor[0], 0, own_block(a));
  Deps pair_ready;
  pair_ready.add(placed).add(arrived);
  int send_first = r - r % 2;  // the pair this rank now holds
  for (int i = 1; i < n / 2; ++i) {
    const int p = i % 2;
    from[p] = static_cast<int>(wrap(from[p] + step_of[p], n));
    const StepId got = plan.recv(neighbor[p], i, blocks(from[p], 2));
    plan.send(neighbor[p], i, blocks(send_first, 2), pair_ready);
    pair_ready = Deps{got};
    send_first = from[p];
  }
}

void gather_bcast(Plan& plan, const AllgatherArgs& a, const AlgorithmSpec&) {
  const int rollup = rollup_radix();
  const int release = release_radix();
  if (a.block_bytes == 0) return;
  const topo::Tree up = topo::make_tree(topo::Shape::kary, a.size, 0, rollup);
  const topo::Tree down = topo::make_tree(topo::Shape::kary, a.size, 0, release);
  const BlockLayout layout = BlockLayout::uniform(a.size, a.block_bytes);
  const Deps gathered = tree_gather(plan, up, a.rank, layout, own_block(a), 0);
  // The release overwrites the whole output, so it follows everything the
  // gather did here (an in-place own block is read from the output).
  tree_bcast(plan, down, a.rank, output_region(0, layout.total()), 1, gathered);
}

double gather_bcast_cost(const CostCase& c, const PortModel& m) {
  return cost::kary_gather(c.ranks, rollup_radix(), c.bytes, m) +
         cost::kary_bcast(c.ranks, release_radix(), c.ranks * c.bytes, m);
}

const AlgorithmTable<AllgatherArgs> kAllgatherAlgorithms{
    Collective::allgather,
    {
        {{.name = "ring",
          .doc = "N-1 steps to the right neighbour",
          .cost =
              closed_form("(P-1) (u(m) + L)", "(p-1)a + n(p-1)/p b [MPICH]", cost::always, 0, false,
                          [](const CostCase& c, const PortModel& m) {
                            return (c.ranks - 1) * (m.u(c.bytes) + m.l(c.bytes));
                          })},
         &ring},
        {{.name = "recursive_doubling",
          .doc = "log2 steps exchanging doubling ranges (folds non-powers of two)",
          .cost = closed_form(
              "sum_{i<log2 P} (u(2^i m) + L); other P: fold (u(m) + L), the "
              "power-of-two steps with 2m blocks, unfold (u(P m) + L)",
              "lgp a + n(p-1)/p b [MPICH] (powers of two)", cost::power_of_two, 0.4, false,
              [](const CostCase& c, const PortModel& m) {
                const int p2 = 1 << cost::floor_log2(c.ranks);
                if (p2 == c.ranks) return cost::sum_doubling(cost::floor_log2(p2), c.bytes, m);
                return cost::sum_doubling(cost::floor_log2(p2), 2 * c.bytes, m) + m.u(c.bytes) +
                       m.l(c.bytes) + m.u(c.ranks * c.bytes) + m.l(c.ranks * c.bytes);
              })},
         &recursive_doubling},
        {{.name = "bruck",
          .doc = "ceil(log2 N) steps at distance 2^k",
          .cost = closed_form(
              "sum_i (u(b_i m) + [b_i >= 2] u(0) + L), b_i = min(2^i, P - 2^i): a wrapped range "
              "is two messages; ignores a later step's message queueing ahead on the ingress",
              "ceil(lgp)a + n(p-1)/p b [MPICH]", cost::never, 0.55, true,
              [](const CostCase& c, const PortModel& m) {
                double t = 0;
                for (int64_t d = 1; d < c.ranks; d *= 2) {
                  const double blocks = static_cast<double>(std::min<int64_t>(d, c.ranks - d));
                  // Ranges of two or more blocks wrap for some rank.
                  t += m.u(blocks * c.bytes) + (blocks >= 2 ? m.u(0) : 0) + m.l(blocks * c.bytes);
                }
                return t;
              })},
         &bruck},
        {{.name = "neighbor_exchange",
          .doc = "N/2 steps with alternate neighbours (even N)",
          .cannot_run = [](int ranks) -> std::string {
            return ranks % 2 == 0 || ranks == 1 ? ""
                                                : fmt::format(
                                                      "neighbor_exchange needs an even number of "
                                                      "ranks, not {}",
                                                      ranks);
          },
          .cost = closed_form("(u(m) + L) + (P/2 - 1)(u(2m) + L)", "none (Chen et al.: P/2 steps)",
                              cost::always, 0, false,
                              [](const CostCase& c, const PortModel& m) {
                                if (c.ranks < 2) return 0.0;
                                return m.u(c.bytes) + m.l(c.bytes) +
                                       (c.ranks / 2 - 1) * (m.u(2 * c.bytes) + m.l(2 * c.bytes));
                              })},
         &neighbor_exchange},
        {{.name = "gather_bcast",
          .doc = "k-ary gather to rank 0 (rollup_radix), k-ary bcast (release_radix)",
          .cost = closed_form(
              "kary gather (rollup_radix) + kary bcast of P m (release_radix)", "none",
              [](const CostCase& c) {
                return cost::full_kary(c.ranks, rollup_radix()) || c.ranks <= rollup_radix() + 1;
              },
              4.0, false, &gather_bcast_cost)},
         &gather_bcast},
        {shm::algorithm(Collective::allgather), nullptr},
        {hierarchical_algorithm(), nullptr},
    }};

}  // namespace

int rollup_radix() {
  return static_cast<int>(rollup_radix_param.get());
}
int release_radix() {
  return static_cast<int>(release_radix_param.get());
}

CallFacts facts(const AllgatherArgs& a) {
  return CallFacts{.collective = Collective::allgather,
                   .ranks = a.size,
                   .bytes = a.block_bytes,
                   .total = a.block_bytes * static_cast<uint64_t>(a.size),
                   .count = a.block_bytes};
}

std::string describe_allgather(const AlgorithmSpec& resolved) {
  if (resolved.name == "gather_bcast")
    return fmt::format("gather_bcast(rollup={},release={})", rollup_radix(), release_radix());
  return resolved.to_string();
}

sched::Schedule build_allgather(const AllgatherArgs& a) {
  check_rank("allgather", a.rank, a.size);
  check_spec("allgather", a.algorithm);
  const AlgorithmSpec spec = resolve(facts(a), a.algorithm);
  Plan plan("allgather " + describe_allgather(spec));
  if (a.block_bytes == 0) return plan.finish();
  kAllgatherAlgorithms.build(plan, a, spec);
  return plan.finish();
}

}  // namespace grove::coll
