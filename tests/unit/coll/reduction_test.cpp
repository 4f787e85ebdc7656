// Reduce, allreduce and reduce-scatter: every algorithm against a reference
// that groups the operands exactly as the algorithm documents (coll/reduce.hpp,
// allreduce.hpp, reduce_scatter.hpp, halving_steps.hpp), so floating-point
// results must match bit for bit.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "coll/allreduce.hpp"
#include "coll/layout.hpp"
#include "coll/reduce.hpp"
#include "coll/reduce_scatter.hpp"
#include "grove/error.hpp"
#include "harness.hpp"
#include "support/auto_choice.hpp"
#include "support/reference_reduce.hpp"

namespace grove::coll {
namespace {

using testing::RankIo;

// --- the operation, exactly as the kernel applies it (left = accumulator) ---

template <class T>
using Vec = std::vector<T>;

template <class T>
Vec<T> combine(ReduceOp op, const Vec<T>& a, const Vec<T>& b) {
  Vec<T> out(a.size());
  for (size_t i = 0; i < a.size(); ++i)
    out[i] = grove::testing::reference_reduce(op, a[i], b[i]);
  return out;
}

// --- the groupings ---

// Inputs by relative rank (q -> real rank (q + root) mod n).
template <class T>
struct Operands {
  ReduceOp op;
  int root = 0;
  std::vector<Vec<T>> by_rank;  // real ranks
  int size() const { return static_cast<int>(by_rank.size()); }
  const Vec<T>& x(int q) const {
    return by_rank[static_cast<size_t>((q % size() + root) % size())];
  }
};

template <class T>
Vec<T> leaf(const Operands<T>& in, const Fold& fold, int v) {
  if (v < fold.rem) return combine(in.op, in.x(2 * v), in.x(2 * v + 1));
  return in.x(v + fold.rem);
}

// Recursive halving: H_k(v) = H_{k-1}(v) ⊕ H_{k-1}(v ^ (p2 >> k)). Returns
// H_steps for every v (virtual rank v ends with chunk v of it).
template <class T>
std::vector<Vec<T>> halving(const Operands<T>& in) {
  const Fold fold(in.size());
  std::vector<Vec<T>> h;
  for (int v = 0; v < fold.p2; ++v)
    h.push_back(leaf(in, fold, v));
  for (int k = 1; k <= fold.steps; ++k) {
    std::vector<Vec<T>> next;
    for (int v = 0; v < fold.p2; ++v)
      next.push_back(
          combine(in.op, h[static_cast<size_t>(v)], h[static_cast<size_t>(v ^ (fold.p2 >> k))]));
    h = std::move(next);
  }
  return h;
}

// Recursive doubling: D_k(v) = D_{k-1}(v) ⊕ D_{k-1}(v ^ 2^(k-1)).
template <class T>
std::vector<Vec<T>> doubling(const Operands<T>& in) {
  const Fold fold(in.size());
  std::vector<Vec<T>> d;
  for (int v = 0; v < fold.p2; ++v)
    d.push_back(leaf(in, fold, v));
  for (int k = 1; k <= fold.steps; ++k) {
    std::vector<Vec<T>> next;
    for (int v = 0; v < fold.p2; ++v)
      next.push_back(
          combine(in.op, d[static_cast<size_t>(v)], d[static_cast<size_t>(v ^ (1 << (k - 1)))]));
    d = std::move(next);
  }
  return d;
}

// Binomial tree over relative ranks, children nearest first.
template <class T>
Vec<T> binomial(const Operands<T>& in, int v) {
  int low = 1;
  if (v == 0) {
    while (low < in.size())
      low *= 2;
  } else {
    while ((v & low) == 0)
      low *= 2;
  }
  Vec<T> acc = in.x(v);
  for (int d = 1; d < low && v + d < in.size(); d *= 2)
    acc = combine(in.op, acc, binomial(in, v + d));
  return acc;
}

// Left fold starting at relative rank `first`, cyclically.
template <class T>
Vec<T> ring_fold(const Operands<T>& in, int first) {
  Vec<T> acc = in.x(first);
  for (int i = 1; i < in.size(); ++i)
    acc = combine(in.op, acc, in.x(first + i));
  return acc;
}

// Element e of a vector split into `pieces` chunks (BlockLayout::split).
size_t chunk_of(size_t e, size_t count, int pieces) {
  const BlockLayout layout = BlockLayout::split(count, 1, pieces);
  for (size_t c = 0; c < layout.size(); ++c)
    if (e < layout.offsets[c] + layout.lengths[c]) return c;
  return 0;
}

template <class T>
Vec<T> pick_by_chunk(const std::vector<Vec<T>>& per_chunk, size_t count, int pieces) {
  Vec<T> out(count);
  for (size_t e = 0; e < count; ++e)
    out[e] = per_chunk[chunk_of(e, count, pieces)][e];
  return out;
}

// --- inputs and running ---

// Cheap (the big cases hold millions of elements): a 64-bit LCG. Floats get
// 29 significant bits in (-4, 4), more than float32 keeps, so sums round and
// the grouping shows in the result.
template <class T>
Vec<T> random_vector(size_t count, uint64_t seed) {
  uint64_t state = seed * 0x9E3779B97F4A7C15u + 1;
  Vec<T> v(count);
  T* out = v.data();
  for (size_t i = 0; i < count; ++i) {
    state = state * 6364136223846793005u + 1442695040888963407u;
    const uint64_t bits = state >> 11;
    if constexpr (std::is_integral_v<T>) {
      out[i] = static_cast<T>(bits ^ (bits >> 31));
    } else {
      out[i] = static_cast<T>(static_cast<double>(static_cast<int32_t>(bits >> 21)) * 0x1p-29);
    }
  }
  return v;
}

template <class T>
std::vector<std::byte> bytes_of(const Vec<T>& v) {
  std::vector<std::byte> out(v.size() * sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), v.data(), out.size());
  return out;
}

struct Case {
  std::string collective;
  std::string algorithm;
  int n = 1;
  int root = 0;
  size_t count = 0;
  Datatype dtype = Datatype::int32;
  ReduceOp op = ReduceOp::sum;
  bool in_place = false;
  uint64_t hash = 0;
};

template <class T>
void run_case(const Case& c) {
  SCOPED_TRACE(::testing::Message()
               << c.collective << " " << c.algorithm << " N=" << c.n << " root=" << c.root
               << " count=" << c.count << " " << datatype_name(c.dtype) << " "
               << reduce_op_name(c.op) << (c.in_place ? " in place" : ""));
  const bool scatter = c.collective == "reduce_scatter";
  const size_t per_rank = scatter ? c.count * static_cast<size_t>(c.n) : c.count;
  Operands<T> in{c.op, 0, {}};
  for (int r = 0; r < c.n; ++r)
    in.by_rank.push_back(random_vector<T>(per_rank, c.hash * 131 + r));

  std::vector<RankIo> io(static_cast<size_t>(c.n));
  for (int r = 0; r < c.n; ++r) {
    RankIo& mine = io[static_cast<size_t>(r)];
    const auto data = bytes_of(in.by_rank[static_cast<size_t>(r)]);
    const bool has_output = c.collective != "reduce" || r == c.root;
    const size_t out_bytes = (scatter ? c.count : c.count) * sizeof(T);
    if (c.in_place && has_output) {
      mine.output = data;
    } else {
      mine.input = data;
      if (has_output) mine.output.assign(out_bytes, std::byte{0xEE});
    }
  }
  const std::string error = testing::run_built(
      c.n,
      [&](int r) {
        if (c.collective == "reduce") {
          return build_reduce(ReduceArgs{r, c.n, c.root, c.count, c.dtype, c.op, c.in_place,
                                         parse_algorithm("reduce", c.algorithm)});
        }
        if (c.collective == "allreduce") {
          return build_allreduce(AllreduceArgs{r, c.n, c.count, c.dtype, c.op, c.in_place,
                                               parse_algorithm("allreduce", c.algorithm)});
        }
        return build_reduce_scatter(ReduceScatterArgs{
            r, c.n, c.count, c.dtype, c.op, parse_algorithm("reduce_scatter", c.algorithm)});
      },
      io, testing::world_options(c.hash));
  ASSERT_EQ(error, "");
  if (c.count == 0) return;

  const Fold fold(c.n);
  // What `auto` chose, as the builder resolves it.
  std::string algorithm = c.algorithm;
  if (c.collective == "reduce")
    algorithm =
        resolved(ReduceArgs{0, c.n, 0, c.count, c.dtype, c.op, false, {}}, c.algorithm).name;
  else if (c.collective == "allreduce")
    algorithm =
        resolved(AllreduceArgs{0, c.n, c.count, c.dtype, c.op, false, {}}, c.algorithm).name;
  else
    algorithm = resolved(ReduceScatterArgs{0, c.n, c.count, c.dtype, c.op, {}}, c.algorithm).name;
  auto expect = [&](int r, const Vec<T>& want) {
    ASSERT_EQ(testing::first_difference(io[static_cast<size_t>(r)].output, bytes_of(want)), -1)
        << "rank " << r;
  };
  if (c.collective == "reduce") {
    in.root = c.root;
    const Vec<T> want =
        algorithm == "binomial" ? binomial(in, 0) : pick_by_chunk(halving(in), c.count, fold.p2);
    expect(c.root, want);
  } else if (c.collective == "allreduce") {
    if (algorithm == "ring") {
      std::vector<Vec<T>> chunks;
      for (int k = 0; k < c.n; ++k)
        chunks.push_back(ring_fold(in, k));
      const Vec<T> want = pick_by_chunk(chunks, c.count, c.n);
      for (int r = 0; r < c.n; ++r)
        expect(r, want);
    } else if (algorithm == "rabenseifner") {
      const Vec<T> want = pick_by_chunk(halving(in), c.count, fold.p2);
      for (int r = 0; r < c.n; ++r)
        expect(r, want);
    } else {
      const std::vector<Vec<T>> d = doubling(in);
      for (int r = 0; r < c.n; ++r) {
        const int owner = fold.sits_out(r) ? r - 1 : r;
        expect(r, d[static_cast<size_t>(fold.virtual_of(owner))]);
      }
    }
  } else {
    for (int r = 0; r < c.n; ++r) {
      // Every rank's block r alone.
      Operands<T> block{c.op, 0, {}};
      for (int q = 0; q < c.n; ++q) {
        const Vec<T>& all = in.by_rank[static_cast<size_t>(q)];
        block.by_rank.emplace_back(all.begin() + static_cast<ptrdiff_t>(r * c.count),
                                   all.begin() + static_cast<ptrdiff_t>((r + 1) * c.count));
      }
      if (algorithm == "ring") {
        expect(r, ring_fold(block, r + 1));
      } else {
        const int v = r < 2 * fold.rem ? r / 2 : r - fold.rem;
        expect(r, halving(block)[static_cast<size_t>(v)]);
      }
    }
  }
}

void run(const Case& c) {
  switch (c.dtype) {
    case Datatype::int8:
      return run_case<int8_t>(c);
    case Datatype::int16:
      return run_case<int16_t>(c);
    case Datatype::int32:
      return run_case<int32_t>(c);
    case Datatype::int64:
      return run_case<int64_t>(c);
    case Datatype::uint8:
      return run_case<uint8_t>(c);
    case Datatype::uint16:
      return run_case<uint16_t>(c);
    case Datatype::uint32:
      return run_case<uint32_t>(c);
    case Datatype::uint64:
      return run_case<uint64_t>(c);
    case Datatype::float32:
      return run_case<float>(c);
    case Datatype::float64:
      return run_case<double>(c);
  }
}

const Datatype kTypes[] = {Datatype::int8,    Datatype::int16,  Datatype::int32,  Datatype::int64,
                           Datatype::uint8,   Datatype::uint16, Datatype::uint32, Datatype::uint64,
                           Datatype::float32, Datatype::float64};
const ReduceOp kOps[] = {ReduceOp::sum,  ReduceOp::prod, ReduceOp::min, ReduceOp::max,
                         ReduceOp::band, ReduceOp::bor,  ReduceOp::bxor};

// Every valid (type, op) pair, in an order that alternates floats and
// integers so a rotation through it covers both.
std::vector<std::pair<Datatype, ReduceOp>> combos() {
  std::vector<std::pair<Datatype, ReduceOp>> out;
  for (ReduceOp op : kOps)
    for (Datatype t : kTypes)
      if (reduce_op_valid(op, t)) out.emplace_back(t, op);
  return out;
}

const int kReduceRankCounts[] = {1, 2, 3, 4, 5, 7, 8, 9, 16};

// Counts: 0, 1, fewer than the ranks, odd, and > 1 MiB of float32 (per rank
// for reduce/allreduce, in total for reduce-scatter).
std::vector<size_t> counts_for(const std::string& collective, int n) {
  if (collective == "reduce_scatter")
    return {0, 1, 3, 37, (size_t{1} << 18) / static_cast<size_t>(n) + 1};
  return {0, 1, 3, 37, 1001, (size_t{1} << 18) + 3};
}

void matrix(const std::string& collective, const std::vector<std::string>& algorithms) {
  const auto all = combos();
  uint64_t hash = 0;
  for (const std::string& algorithm : algorithms) {
    for (int n : kReduceRankCounts) {
      const std::vector<size_t> counts = counts_for(collective, n);
      for (size_t count : counts) {
        const bool big = count == counts.back();
        const int roots = collective == "reduce" ? n : 1;
        for (int root = 0; root < roots; ++root) {
          if (big && root != n - 1) continue;
          Case c;
          c.collective = collective;
          c.algorithm = algorithm;
          c.n = n;
          c.root = root;
          c.count = count;
          c.hash = hash++;
          // Big vectors as float32 sums (the grouping-sensitive case); the
          // others rotate through every (type, op).
          const auto [dtype, op] =
              big ? std::make_pair(Datatype::float32, ReduceOp::sum) : all[c.hash % all.size()];
          c.dtype = dtype;
          c.op = op;
          c.in_place = collective != "reduce_scatter" && c.hash % 2 == 1;
          run(c);
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  }
}

// Every registered algorithm of `collective` (each needs its combine order
// in `run`: a new one fails here until it is documented), and auto.
std::vector<std::string> with_auto(const std::string& collective) {
  std::vector<std::string> out = algorithm_examples(collective);
  out.push_back("auto");
  return out;
}

TEST(Reduce, EveryAlgorithmRootAndSize) {
  matrix("reduce", with_auto("reduce"));
}

TEST(Allreduce, EveryAlgorithmAndSize) {
  matrix("allreduce", with_auto("allreduce"));
}

TEST(ReduceScatter, EveryAlgorithmAndSize) {
  matrix("reduce_scatter", with_auto("reduce_scatter"));
}

// Every (type, op) through every algorithm at a power of two and not.
TEST(Reductions, EveryTypeAndOperation) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> algorithms = {
      {"reduce", algorithm_examples("reduce")},
      {"allreduce", algorithm_examples("allreduce")},
      {"reduce_scatter", algorithm_examples("reduce_scatter")}};
  uint64_t hash = 1000;
  for (const auto& [collective, names] : algorithms) {
    for (const std::string& algorithm : names) {
      for (int n : {3, 8}) {
        for (auto [dtype, op] : combos()) {
          Case c{collective, algorithm, n, n - 1, 37, dtype, op, false, hash++};
          run(c);
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  }
}

TEST(Reductions, RejectBadArguments) {
  EXPECT_THROW(build_allreduce(AllreduceArgs{0, 4, 8, Datatype::float32, ReduceOp::bxor, false,
                                             parse_algorithm("allreduce", "ring")}),
               Error);
  EXPECT_THROW(build_reduce(ReduceArgs{0, 4, 4, 8, Datatype::int32, ReduceOp::sum, false,
                                       parse_algorithm("reduce", "binomial")}),
               Error);
  EXPECT_THROW(build_reduce_scatter(ReduceScatterArgs{0, 4, 8, Datatype::int32, ReduceOp::sum,
                                                      parse_algorithm("reduce", "binomial")}),
               Error);
  EXPECT_THROW(parse_algorithm("allreduce", "bogus"), Error);
}

}  // namespace
}  // namespace grove::coll
