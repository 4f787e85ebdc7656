#include "coll/alltoall.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "coll/checks.hpp"
#include "coll/posting_depth.hpp"
#include "coll/registry.hpp"
#include "coll/shm/collectives.hpp"
#include "core/params.hpp"
#include "grove/error.hpp"

namespace grove::coll {
namespace {

const params::StringParam alltoall_posts_param{
    "alltoall_posts", "auto",
    "alltoall/alltoallv pairwise: the most sends, and separately receives, in flight per rank: "
    "'auto' (the selection tables' pairwise rows, docs/selection.md) or a number (authoritative; "
    "above N means N)",
    [](std::string_view value) -> std::string {
      try {
        parse_posting_depth(value, "alltoall_posts");
        return {};
      } catch (const Error& e) {
        return e.what();
      }
    }};

int wrap_rank(int64_t i, int n) {
  return static_cast<int>(((i % n) + n) % n);
}

// Where the blocks to send are read from: the input, or a scratch copy of
// the output when in place (the first step of the schedule).
// Blocks are block_regions of the uniform layout: they move with the rank.
struct SendSource {
  Region all;
  std::optional<StepId> ready;  // the copy to scratch, if any
  BlockLayout blocks;
  Region block(int j) const {
    return block_region(all.buffer, blocks, static_cast<size_t>(j), all.offset);
  }
};

SendSource take_source(Plan& plan, const AlltoallArgs& a) {
  const size_t total = static_cast<size_t>(a.size) * a.block_bytes;
  BlockLayout blocks = BlockLayout::uniform(a.size, a.block_bytes);
  if (!a.in_place) return SendSource{input_region(0, total), std::nullopt, std::move(blocks)};
  const Region copy = plan.take_scratch(total);
  return SendSource{copy, plan.copy(output_region(0, total), copy), std::move(blocks)};
}

Region out_block(const SendSource& source, int j) {
  return block_region(Buffer::output, source.blocks, static_cast<size_t>(j));
}

// The pairwise exchange itself; linear is the same with no depth limit.
void exchange(Plan& plan, const AlltoallArgs& a, const SendSource& source) {
  const Deps after = Deps().add(source.ready);
  // Every rank runs the same steps, one block further along.
  plan.set_symmetry(a.rank, a.size, 1, source.blocks);
  plan.copy(source.block(a.rank), out_block(source, a.rank), after);
  for (int i = 1; i < a.size; ++i) {
    const int to = wrap_rank(a.rank + i, a.size);
    const int from = wrap_rank(a.rank - i, a.size);
    // In place, a receive overwrites output the scratch copy reads.
    plan.recv(from, 0, out_block(source, from), after);
    plan.send(to, 0, source.block(to), after);
  }
}

void linear(Plan& plan, const AlltoallArgs& a, const AlgorithmSpec&) {
  exchange(plan, a, take_source(plan, a));
}

void pairwise(Plan& plan, const AlltoallArgs& a, const AlgorithmSpec& spec) {
  const uint32_t depth = pairwise_depth(a.size, a.posts, spec);
  plan.set_limits(depth, depth);
  exchange(plan, a, take_source(plan, a));
}

void alltoall_bruck(Plan& plan, const AlltoallArgs& a, const AlgorithmSpec&) {
  const size_t b = a.block_bytes;
  const int n = a.size;
  const int r = a.rank;
  const SendSource source = take_source(plan, a);
  const Deps after = Deps().add(source.ready);
  // Every rank runs the same steps, one block further along: every region
  // that depends on the rank is one block of the layout (the rotation
  // below included), the rest is scratch at fixed offsets.
  plan.set_symmetry(r, n, 1, source.blocks);
  const std::optional<StepId> own = plan.copy(source.block(r), out_block(source, r), after);
  if (n == 1) return;

  // After the rotation work[i] holds the block rank r sends to r + i. Step
  // k moves every block whose index has bit k set forward by 2^k, keeping
  // its index, so the block q sent to q + i arrives there at index i.
  const Region work = plan.take_scratch(static_cast<size_t>(n) * b);
  auto slot = [&](int i, int count) {
    return sub_region(work, static_cast<size_t>(i) * b, static_cast<size_t>(count) * b);
  };
  // work[i] = source[(r + i) mod N], one block per copy: two copies of
  // the pieces split at r would be fewer steps, but their lengths depend
  // on r, so no one schedule would stand for every rank (the simulator
  // shares it; docs/simulator.md). Each copy follows the one before (they
  // run in step order anyway), so one is ready at a time, not N: an
  // execution's ready steps stay few.
  std::optional<StepId> rotated = source.ready;
  for (int i = 0; i < n; ++i)
    rotated = plan.copy(source.block(wrap_rank(r + i, n)), slot(i, 1), Deps().add(rotated));

  // The runs of indices with bit k set: [m 2^(k+1) + 2^k, (m+1) 2^(k+1)).
  auto runs = [&](int d) {
    std::vector<std::pair<int, int>> out;  // (first index, count)
    for (int first = d; first < n; first += 2 * d)
      out.emplace_back(first, std::min(d, n - first));
    return out;
  };
  int max_count = 0;
  for (int d = 1; d < n; d *= 2) {
    int count = 0;
    for (auto [first, len] : runs(d))
      count += len;
    max_count = std::max(max_count, count);
  }
  const Region outgoing = plan.take_scratch(static_cast<size_t>(max_count) * b);
  const Region incoming = plan.take_scratch(static_cast<size_t>(max_count) * b);

  // The copies of a phase are chained, one ready at a time (they run in
  // step order anyway), and the last of a chain stands for all of it, so
  // the next phase depends on one step, not on every copy (N/2 of them).
  std::optional<StepId> previous_unpack = rotated;  // the rotation before the first step
  std::optional<StepId> previous_send;
  int step = 0;
  for (int d = 1; d < n; d *= 2, ++step) {
    const std::vector<std::pair<int, int>> pieces = runs(d);
    // Reuses `outgoing` after the previous send; reads work after the
    // previous unpack.
    std::optional<StepId> packed = plan.join(Deps().add(previous_unpack).add(previous_send));
    size_t at = 0;
    for (auto [first, len] : pieces) {
      packed = plan.copy(slot(first, len), sub_region(outgoing, at, static_cast<size_t>(len) * b),
                         Deps().add(packed));
      at += static_cast<size_t>(len) * b;
    }
    const StepId got = plan.recv(wrap_rank(r - d, n), step, sub_region(incoming, 0, at),
                                 Deps().add(previous_unpack));
    const StepId sent =
        plan.send(wrap_rank(r + d, n), step, sub_region(outgoing, 0, at), Deps().add(packed));
    // Unpacking overwrites what this step packed, so it follows the packing.
    std::optional<StepId> unpacked = plan.join(Deps().add(packed).add(got));
    at = 0;
    for (auto [first, len] : pieces) {
      unpacked = plan.copy(sub_region(incoming, at, static_cast<size_t>(len) * b), slot(first, len),
                           Deps().add(unpacked));
      at += static_cast<size_t>(len) * b;
    }
    previous_unpack = unpacked;
    previous_send = sent;
  }
  // Block i now came from rank r - i: output[(r - i) mod N] = work[i].
  // Every other step comes before the last unpacking or the last send, so
  // joining those and the own block's copy waits for all of them; the
  // copies out are chained like the rotation.
  std::optional<StepId> copied = plan.join(Deps().add(previous_unpack).add(previous_send).add(own));
  for (int i = 1; i < n; ++i)
    copied = plan.copy(slot(i, 1), out_block(source, wrap_rank(r - i, n)), Deps().add(copied));
}

const AlgorithmTable<AlltoallArgs> kAlltoallAlgorithms{
    Collective::alltoall,
    {
        {{.name = "linear",
          .doc = "every receive and send posted at once",
          .cost = closed_form("(P-1) u(m) + L", "(P-1)g(m) + L [DER]; (P-1)(a+mb) [DER]",
                              cost::always, 0, false,
                              [](const CostCase& c, const PortModel& m) {
                                return (c.ranks - 1) * m.u(c.bytes) + m.l(c.bytes);
                              })},
         &linear},
        {{.name = "pairwise",
          .takes_posts = true,
          .doc = "send to r+i, receive from r-i, at most posts= (or alltoall_posts) in flight",
          .cost = closed_form(
              "(P-1) u(m) + L",
              "(P-1)(g(m) + L) [DER]: steps do not wait for each other; (p-1)a + nb [MPICH]",
              cost::always, 0, false,
              [](const CostCase& c, const PortModel& m) {
                return (c.ranks - 1) * m.u(c.bytes) + m.l(c.bytes);
              })},
         &pairwise},
        {{.name = "bruck",
          .doc = "ceil(log2 N) packed steps (small blocks)",
          .cost = closed_form("sum_k (u(c_k m) + L), c_k = #{j in [1, P): bit k of j set}",
                              "ceil(log2 P)(a + (P/2) m b) [DER]; lgp a + (n/2) lgp b [MPICH]",
                              cost::power_of_two, 0.5, true,
                              [](const CostCase& c, const PortModel& m) {
                                double t = 0;
                                for (int64_t bit = 1; bit < c.ranks; bit *= 2) {
                                  double blocks = 0;
                                  for (int64_t j = 1; j < c.ranks; ++j)
                                    blocks += (j & bit) ? 1 : 0;
                                  t += m.u(blocks * c.bytes) + m.l(blocks * c.bytes);
                                }
                                return t;
                              })},
         &alltoall_bruck},
        {shm::algorithm(Collective::alltoall), nullptr},
    }};

}  // namespace

std::optional<uint32_t> alltoall_posts_setting() {
  return parse_posting_depth(alltoall_posts_param.get(), "alltoall_posts");
}

uint32_t alltoall_posting_depth(int size, uint64_t peer_bytes, uint64_t total_bytes) {
  return resolve_posting_depth(alltoall_posts_setting(), static_cast<uint32_t>(size), peer_bytes,
                               total_bytes);
}

uint32_t pairwise_depth(int size, uint32_t posts, const AlgorithmSpec& spec) {
  const auto n = static_cast<uint32_t>(std::max(size, 1));
  if (posts > 0) return std::min(posts, n);
  if (const std::optional<uint32_t> setting = alltoall_posts_setting())
    return std::min(*setting, n);
  return spec.posts > 0 ? std::min(spec.posts, n) : n;
}

CallFacts facts(const AlltoallArgs& a) {
  return CallFacts{.collective = Collective::alltoall,
                   .ranks = a.size,
                   .bytes = a.block_bytes,
                   .total = a.block_bytes * static_cast<uint64_t>(a.size),
                   .count = a.block_bytes};
}

sched::Schedule build_alltoall(const AlltoallArgs& a) {
  check_rank("alltoall", a.rank, a.size);
  check_spec("alltoall", a.algorithm);
  const AlgorithmSpec spec = resolve(facts(a), a.algorithm);
  Plan plan("alltoall " + spec.to_string());
  if (a.block_bytes == 0) return plan.finish();
  kAlltoallAlgorithms.build(plan, a, spec);
  return plan.finish();
}

}  // namespace grove::coll
