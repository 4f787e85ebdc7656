// grove tune (tools/tuning/tune.hpp): the choices on a synthetic linear
// port model against the closed forms computed here by hand, the segment
// size at the analytic optimum, tuning files that read back as the rows
// they were written from, and refusal of bad grids and files.

#include "tuning/tune.hpp"

#include <gtest/gtest.h>

#include <string>

#include "core/params.hpp"
#include "grove/error.hpp"
#include "model/cost.hpp"
#include "model/segment.hpp"
#include "support/error_text.hpp"
#include "tuning/candidates.hpp"
#include "tuning/explain.hpp"

namespace grove::tuning {
namespace {

// u = w = g0 + m G, latency L: g0 2 us, G 2^-10 us/B, L 10 us.
constexpr double kG0 = 2.0;
constexpr double kG = 1.0 / 1024;
constexpr double kL = 10.0;
coll::PortModel linear_model() {
  coll::PortModel m;
  m.u = [](double bytes) { return kG0 + bytes * kG; };
  m.w = m.u;
  m.lambda = kL;
  return m;
}

using grove::testing::error_text;

const Candidate& candidate_named(const std::vector<Candidate>& ranked, const std::string& name) {
  for (const Candidate& c : ranked)
    if (c.spec.name == name) return c;
  throw std::runtime_error("no candidate " + name);
}

TEST(Tune, SmallBcastPicksTheAlgorithmTheClosedFormsRankFirst) {
  // 8 ranks, 1 B: u = 2 + 1/1024 us. Flat: 7u + L; binomial: 3u + 3L;
  // chain: 7(u + L). The 6-ary heap (the root's six children, then rank 7
  // under rank 1) finishes at max(6u + L, 2u + 2L) = 2u + 2L, below flat
  // (latency 10 us is worth five sends).
  const std::vector<Candidate> ranked = rank_candidates("bcast", 8, 1, linear_model());
  const double u = kG0 + kG;
  EXPECT_DOUBLE_EQ(candidate_named(ranked, "flat").predicted_us, 7 * u + kL);
  EXPECT_DOUBLE_EQ(candidate_named(ranked, "binomial").predicted_us, 3 * u + 3 * kL);
  EXPECT_DOUBLE_EQ(candidate_named(ranked, "chain").predicted_us, 7 * (u + kL));
  for (size_t i = 1; i < ranked.size(); ++i)
    EXPECT_LE(ranked[i - 1].predicted_us, ranked[i].predicted_us) << i;

  Grid grid = make_grid("8", "1", {"bcast"});
  const Tuning t = tune(grid, linear_model());
  ASSERT_EQ(t.cells.size(), 1u);
  EXPECT_EQ(t.cells[0].chosen.to_string(), ranked.front().spec.to_string());
  EXPECT_EQ(t.cells[0].ranked.size(), kKeptCandidates);
  EXPECT_EQ(t.cells[0].chosen.to_string(), "kary:6");
  EXPECT_DOUBLE_EQ(t.cells[0].ranked.front().predicted_us, 2 * u + 2 * kL);
}

TEST(Tune, PipelineSegmentIsTheAnalyticOptimum) {
  // P = 10, m = 1 MiB: S* = sqrt((P-2) m G / g0) = sqrt(8 * 2^20 * 2^-10 / 2)
  // = 64 segments of 16 KiB; (S + 8)(2 + 1024/S) + 9 L is 1296 + 90 us there.
  const uint64_t m = uint64_t{1} << 20;
  EXPECT_DOUBLE_EQ(model::analytic_pipeline_segments(10, static_cast<double>(m), kG0, kG), 64.0);
  const std::vector<Candidate> ranked = rank_candidates("bcast", 10, m, linear_model());
  const Candidate& pipeline = candidate_named(ranked, "pipeline");
  EXPECT_EQ(pipeline.spec.segment, 16384u);
  EXPECT_DOUBLE_EQ(pipeline.predicted_us, 1296.0 + 9 * kL);
  // A segment either side costs more.
  for (uint64_t s : {m / 63 + 1, m / 65 + 1}) {
    coll::AlgorithmSpec other = pipeline.spec;
    other.segment = s;
    EXPECT_GT(predict(other, 10, m, linear_model()), pipeline.predicted_us) << s;
  }
}

// The linear model with host terms: a call costs 3 us more than its messages,
// the shared-memory engine 1 us plus copies of 0.1 us + m / 4096 us.
coll::PortModel model_with_host_terms() {
  coll::PortModel m = linear_model();
  m.call_us = 3;
  m.shm_us = 1;
  m.copy = [](double bytes) { return 0.1 + bytes / 4096; };
  return m;
}

TEST(Tune, HostTermsAddTheCallCostAndPriceTheSharedMemoryEngine) {
  params::ScopedSet cma_from("shm_cma_min_bytes", "65536");
  params::ScopedSet cma_block_from("shm_cma_min_block_bytes", "65536");
  const coll::PortModel m = model_with_host_terms();
  const std::vector<Candidate> ranked = rank_candidates("bcast", 4, 1024, m);
  const double u = kG0 + 1024 * kG;
  // A schedule pays its messages and the call: flat 3u + L + 3.
  EXPECT_DOUBLE_EQ(candidate_named(ranked, "flat").predicted_us, 3 * u + kL + 3);
  // The engine: s + two copies (the root's in, the readers' out).
  ASSERT_EQ(ranked.front().spec.name, "shm");
  EXPECT_DOUBLE_EQ(ranked.front().predicted_us, 1 + 2 * (0.1 + 0.25));
  // Scatter's root copies every block in: s + c(P m) + c(m).
  EXPECT_DOUBLE_EQ(candidate_named(rank_candidates("scatter", 4, 1024, m), "shm").predicted_us,
                   1 + (0.1 + 1.0) + (0.1 + 0.25));
  // From shm_cma_min_bytes and shm_cma_min_block_bytes (64 KiB) the single-copy path: two publishes
  // and one copy per reader (bcast, scatter), P copies (gather, allgather, alltoall), past
  // shm_max_bytes (256 KiB).
  EXPECT_DOUBLE_EQ(candidate_named(rank_candidates("bcast", 4, 1 << 20, m), "shm").predicted_us,
                   2 + (0.1 + 256));
  EXPECT_DOUBLE_EQ(candidate_named(rank_candidates("bcast", 4, 65536, m), "shm").predicted_us,
                   2 + (0.1 + 16));
  EXPECT_DOUBLE_EQ(candidate_named(rank_candidates("scatter", 4, 65536, m), "shm").predicted_us,
                   2 + (0.1 + 16));
  EXPECT_DOUBLE_EQ(candidate_named(rank_candidates("alltoall", 4, 1 << 20, m), "shm").predicted_us,
                   2 + 4 * (0.1 + 256));
  // Just below it, the slots: s + c(m) + P c(m) for gather.
  EXPECT_DOUBLE_EQ(candidate_named(rank_candidates("gather", 4, 65532, m), "shm").predicted_us,
                   1 + 5 * (0.1 + 65532.0 / 4096));
  // Reductions: chunk m of every operand, then every combined chunk, three
  // publishes; reduce's root combines its own chunk in place.
  EXPECT_DOUBLE_EQ(candidate_named(rank_candidates("allreduce", 4, 1 << 20, m), "shm").predicted_us,
                   3 + 8 * (0.1 + 64));
  EXPECT_DOUBLE_EQ(candidate_named(rank_candidates("reduce", 4, 1 << 20, m), "shm").predicted_us,
                   3 + 7 * (0.1 + 64));
  // Beyond shm_max_bytes with the path off the engine is no candidate;
  // without host terms it is none anywhere.
  {
    params::ScopedSet off("shm_cma_min_bytes", "0");
    for (const Candidate& c : rank_candidates("bcast", 4, 1 << 20, m))
      EXPECT_NE(c.spec.name, "shm");
  }
  for (const Candidate& c : rank_candidates("bcast", 4, 1024, linear_model()))
    EXPECT_NE(c.spec.name, "shm");
}

// The host terms above with the copies between ranks apart from the copy
// within a process: into a slot 0.2 us + m / 2048, out of another's slot
// 0.3 us + m / 1024, process_vm_readv 2 us + m / 512.
coll::PortModel model_with_copies_between_ranks() {
  coll::PortModel m = model_with_host_terms();
  m.copy_in = [](double bytes) { return 0.2 + bytes / 2048; };
  m.copy_out = [](double bytes) { return 0.3 + bytes / 1024; };
  m.copy_cma = [](double bytes) { return 2 + bytes / 512; };
  return m;
}

TEST(Tune, ShmPricesEachCopyByWhereItsBytesAre) {
  params::ScopedSet cma_from("shm_cma_min_bytes", "65536");
  params::ScopedSet cma_block_from("shm_cma_min_block_bytes", "65536");
  const coll::PortModel m = model_with_copies_between_ranks();
  auto shm = [&](const char* collective, double bytes) {
    return candidate_named(rank_candidates(collective, 4, static_cast<uint64_t>(bytes), m), "shm")
        .predicted_us;
  };
  // Slots: the writer's copy in, then the readers' copies out.
  EXPECT_DOUBLE_EQ(shm("bcast", 1024), 1 + (0.2 + 0.5) + (0.3 + 1.0));
  // Up to 48 B the inline line: the data comes with the observe, and the
  // reader's copy is one within its process. Scatter's and alltoall's
  // contribution is all 4 blocks: 12 B blocks inline, 13 B ones not.
  EXPECT_DOUBLE_EQ(shm("bcast", 48), 1 + (0.2 + 48.0 / 2048) + (0.1 + 48.0 / 4096));
  EXPECT_DOUBLE_EQ(shm("bcast", 49), 1 + (0.2 + 49.0 / 2048) + (0.3 + 49.0 / 1024));
  EXPECT_DOUBLE_EQ(shm("gather", 16),
                   1 + (0.2 + 16.0 / 2048) + (0.1 + 16.0 / 4096) + 3 * (0.1 + 16.0 / 4096));
  EXPECT_DOUBLE_EQ(shm("scatter", 12),
                   1 + (0.2 + 48.0 / 2048) + std::max(0.1 + 12.0 / 4096, 0.1 + 12.0 / 4096));
  EXPECT_DOUBLE_EQ(shm("scatter", 13), 1 + (0.2 + 52.0 / 2048) + (0.3 + 13.0 / 1024));
  // Scatter: the root copies all 4 blocks in; its own block (in process)
  // while the others copy theirs out: the longer counts.
  EXPECT_DOUBLE_EQ(shm("scatter", 1024), 1 + (0.2 + 2.0) + (0.3 + 1.0));
  // Gather: one block in, the root's own in process, three out of slots.
  EXPECT_DOUBLE_EQ(shm("gather", 1024), 1 + (0.2 + 0.5) + (0.1 + 0.25) + 3 * (0.3 + 1.0));
  EXPECT_DOUBLE_EQ(shm("alltoall", 1024), 1 + (0.2 + 2.0) + (0.1 + 0.25) + 3 * (0.3 + 1.0));
  // Two phases from 4 KiB: a chunk of m/4 of each operand, then of each result.
  EXPECT_DOUBLE_EQ(shm("allreduce", 16384), 2 + (0.2 + 8.0) + 2 * ((0.1 + 1.0) + 3 * (0.3 + 4.0)));
  // Single copy from 64 KiB: the readers' process_vm_readv.
  EXPECT_DOUBLE_EQ(shm("bcast", 1 << 20), 2 + (2 + 2048.0));
  EXPECT_DOUBLE_EQ(shm("scatter", 65536), 2 + (2 + 128.0));
  EXPECT_DOUBLE_EQ(shm("gather", 65536), 2 + (0.1 + 16.0) + 3 * (2 + 128.0));
  EXPECT_DOUBLE_EQ(shm("allreduce", 1 << 20), 3 + 2 * ((0.1 + 64.0) + 3 * (2 + 512.0)));
  // A scatter whose own block costs more in process than a reader's copy
  // out (a curve can be anything): the root's copy is the longer.
  coll::PortModel slow_local = m;
  slow_local.copy = [](double bytes) { return 0.1 + bytes / 256; };
  EXPECT_DOUBLE_EQ(
      candidate_named(rank_candidates("scatter", 4, 1024, slow_local), "shm").predicted_us,
      1 + (0.2 + 2.0) + (0.1 + 4.0));
}

TEST(Tune, AProbeTablePricesTheEngineWithItsCopyCurvesOrWithMemcpyWithoutThem) {
  params::ScopedSet cma_from("shm_cma_min_bytes", "65536");
  params::ScopedSet cma_block_from("shm_cma_min_block_bytes", "65536");
  const std::string base =
      "L 1\n0 1 1 2\n1048576 1 1 1026\nshm_us 0.5\ncopy 1 0.01\ncopy 4096 0.21\n";
  const std::string between =
      "copy_in 1 0.02\ncopy_in 4096 0.42\ncopy_out 1 0.1\ncopy_out 4096 1.3\n"
      "copy_cma 1 2\ncopy_cma 4096 3\n";
  const coll::PortModel probed =
      model::plogp_model(sim::PlogpTable::parse(base + between, "probed.txt"));
  // 2 ranks, 2048.5 B... in whole bytes: 2049 B, interpolated on each curve.
  const double b = 2049;
  auto on = [&](double at1, double at4096) { return at1 + (at4096 - at1) * (b - 1) / 4095; };
  EXPECT_DOUBLE_EQ(model::predict_us("bcast", "shm", 2, b, probed),
                   0.5 + on(0.02, 0.42) + on(0.1, 1.3));
  // Past shm_cma_min_bytes the reader's process_vm_readv, extrapolated.
  EXPECT_DOUBLE_EQ(model::predict_us("bcast", "shm", 2, 65536, probed),
                   1.0 + (2 + (3 - 2) * (65536.0 - 1) / 4095));
  // A table from before the probe measured them: every copy as memcpy.
  const coll::PortModel older = model::plogp_model(sim::PlogpTable::parse(base, "older.txt"));
  EXPECT_DOUBLE_EQ(model::predict_us("bcast", "shm", 2, b, older), 0.5 + 2 * on(0.01, 0.21));
}

TEST(Tune, ScatterPaysTheCopiesOfItsOwnBlockOnItsCriticalPath) {
  const coll::PortModel m = model_with_host_terms();
  auto predicted = [&](const char* algorithm, int ranks, double bytes) {
    return model::predict_us("scatter", algorithm, ranks, bytes, m);
  };
  auto u = [](double bytes) { return kG0 + bytes * kG; };
  const double mib = 1 << 20;
  const double copy = 0.1 + mib / 4096;
  // The root's copy hides behind a round trip 2 (u(0) + L) = 24 us; a
  // relay's copy precedes its forwarding whole.
  const double root = copy - 2 * (kG0 + kL);
  EXPECT_DOUBLE_EQ(predicted("flat", 2, mib), 3 + u(mib) + kL + root);
  EXPECT_DOUBLE_EQ(predicted("binomial", 4, mib), 3 + u(mib) + u(2 * mib) + 2 * kL + root + copy);
  EXPECT_DOUBLE_EQ(predicted("chain", 4, mib),
                   3 + (u(mib) + kL) + (u(2 * mib) + kL) + (u(3 * mib) + kL) + root + 2 * copy);
  // 1 KiB: the root's copy (0.35 us) hides entirely; a relay's does not.
  EXPECT_DOUBLE_EQ(predicted("flat", 2, 1024), 3 + u(1024) + kL);
  EXPECT_DOUBLE_EQ(predicted("binomial", 4, 1024),
                   3 + u(1024) + u(2048) + 2 * kL + (0.1 + 1024.0 / 4096));
  // Without a copy curve (Hockney, or a table without host terms) no copies.
  EXPECT_DOUBLE_EQ(model::predict_us("scatter", "flat", 2, mib, linear_model()), u(mib) + kL);
}

TEST(Tune, SegmentsPostedTogetherPayOneHandshakeAndOneMessageStillTakesG) {
  // g(m) = 2 us + m / (1 KiB/us); sends posted together 1 us + m / (2 KiB/us)
  // above 8 KiB; L 1 us.
  const coll::PortModel m = model::plogp_model(sim::PlogpTable::parse(
      "L 1\n0 1 1 2\n8192 1 1 10\n1048576 1 1 1026\n"
      "gap_posted 0 2\ngap_posted 8192 10\ngap_posted 16384 9\ngap_posted 1048576 513\n",
      "t.txt"));
  auto g = [](double bytes) { return 2 + bytes / 1024; };
  auto gp = [](double bytes) { return 1 + bytes / 2048; };
  // A 256 KiB pipeline of 64 KiB segments at 2 ranks: the first segment's
  // g + L, then three gaps of sends posted together.
  EXPECT_DOUBLE_EQ(model::predict_us("bcast", "pipeline:seg=64KiB", 2, 262144, m),
                   g(65536) + 1 + 3 * gp(65536));
  // One message of 256 KiB: g + L.
  EXPECT_DOUBLE_EQ(model::predict_us("bcast", "flat", 2, 262144, m), g(262144) + 1);
  // scatter_allgather's two halves, posted together.
  EXPECT_DOUBLE_EQ(model::predict_us("bcast", "scatter_allgather", 2, 262144, m),
                   gp(131072) + g(131072) + 1);
  // Below 8 KiB nothing overlaps: two segments cost two g.
  EXPECT_DOUBLE_EQ(model::predict_us("bcast", "pipeline:seg=2KiB", 2, 4096, m), 2 * g(2048) + 1);
}

TEST(Tune, ShmRowsAreFollowedByTheFastestScheduleForCallsShmCannotTake) {
  // Without the single-copy path, shm cannot take 1 MiB.
  params::ScopedSet off("shm_cma_min_bytes", "0");
  const coll::PortModel m = model_with_host_terms();
  Tuning t = tune(make_grid("4", "1KiB,1MiB", {"bcast"}), m);
  ASSERT_EQ(t.cells.size(), 2u);
  EXPECT_EQ(t.cells[0].chosen.name, "shm");
  const coll::AlgorithmSpec fallback = t.cells[0].ranked[1].spec;
  EXPECT_NE(fallback.name, "shm");
  const coll::SelectTable table = to_table(t);
  ASSERT_EQ(table.collectives.size(), 1u);
  const std::vector<coll::SelectRow>& rows = table.collectives[0].rows;
  // hier kept first; no unconditional built-in shm row; then the model's.
  ASSERT_GE(rows.size(), 4u);
  EXPECT_EQ(rows[0].algorithm.name, "hier");
  EXPECT_EQ(rows[1].algorithm.name, "shm");
  EXPECT_EQ(rows[1].bytes.max, (uint64_t{1} << 20) - 1);
  EXPECT_EQ(rows[1].ranks.min, 4u);
  // A 1 KiB call at 4 ranks that shm cannot take: the first other row that
  // matches is the model's fastest schedule.
  const coll::CallFacts facts = call_facts({"bcast", 4, 1024, true});
  const coll::SelectRow* hit = nullptr;
  for (size_t i = 2; i < rows.size() && hit == nullptr; ++i)
    if (rows[i].matches(facts)) hit = &rows[i];
  ASSERT_NE(hit, nullptr);
  EXPECT_EQ(hit->algorithm.to_string(), fallback.to_string());
  for (const coll::SelectRow& r : rows)
    EXPECT_FALSE(r.algorithm.name == "shm" && !r.bytes.bounded()) << r.conditions();
}

TEST(Tune, GridTextsAreParsedAndBadOnesRefusedWithTheirCause) {
  EXPECT_EQ(parse_ranks("2-4,16:64,3"), (std::vector<int>{2, 3, 4, 16, 32, 64}));
  EXPECT_EQ(error_text([] { parse_ranks("1-4"); }),
            "--ranks '1-4': '1' is not a rank count in 2..1048576");
  EXPECT_EQ(error_text([] { parse_ranks("8-4"); }), "--ranks '8-4': 8 > 4");
  EXPECT_EQ(error_text([] { parse_ranks("2,,4"); }), "--ranks '2,,4': empty entry");
  EXPECT_EQ(error_text([] { parse_ranks("x"); }),
            "--ranks 'x': 'x' is not a rank count in 2..1048576");
  EXPECT_NE(error_text([] {
              make_grid("2", "1", {"alltoallv"});
            }).find("--coll 'alltoallv': not a collective with algorithms to choose from"),
            std::string::npos);
  const Grid g = make_grid("2,4", "1:8", {"scatter", "bcast"});
  EXPECT_EQ(g.sizes, (std::vector<uint64_t>{1, 2, 4, 8}));
  // The registry's order (collectives_declared), not the command line's.
  EXPECT_EQ(g.collectives, (std::vector<std::string>{"bcast", "scatter"}));
}

TEST(Tune, TuningFileReadsBackAsTheRowsItWasWrittenFrom) {
  Tuning t = tune(make_grid("2-4,8,16", "1:4MiB", {}), linear_model());
  t.model = "synthetic linear model";
  t.plogp = "probe.txt";
  t.command = "grove tune --plogp probe.txt";
  const std::string text = tuning_file_text(t);
  const coll::SelectTable back = coll::parse_select_table(text, "t.json");
  EXPECT_EQ(back.plogp, "probe.txt");
  EXPECT_EQ(coll::format_select_table(back), coll::format_select_table(to_table(t)));
  // Every grid cell reads back its own choice.
  for (const Cell& c : t.cells) {
    if (c.collective == "barrier") continue;
    const coll::SelectTable::Rows* rows = nullptr;
    for (const auto& r : back.collectives)
      if (coll::collective_name(r.collective) == c.collective) rows = &r;
    ASSERT_NE(rows, nullptr) << c.collective;
    if (c.bytes % 4 != 0 && (c.collective == "reduce" || c.collective == "allreduce" ||
                             c.collective == "reduce_scatter")) {
      continue;  // not a whole float32 vector: no call has this size
    }
    const coll::CallFacts facts = call_facts({c.collective, c.ranks, c.bytes, true});
    const coll::SelectRow* hit = nullptr;
    for (const coll::SelectRow& row : rows->rows) {
      if (row.algorithm.name == "shm" || row.algorithm.name == "hier") continue;
      if (row.matches(facts)) {
        hit = &row;
        break;
      }
    }
    ASSERT_NE(hit, nullptr) << c.collective << " " << c.ranks << " " << c.bytes;
    EXPECT_EQ(hit->algorithm.name, c.chosen.name)
        << c.collective << " " << c.ranks << " " << c.bytes;
    EXPECT_EQ(hit->algorithm.radix, c.chosen.radix) << c.collective << " " << c.ranks;
    EXPECT_EQ(hit->algorithm.segment, c.chosen.segment) << c.collective << " " << c.ranks;
  }
}

TEST(Tune, TruncatedOrWrongTuningFilesAreRefusedWithFileAndLine) {
  Tuning t = tune(make_grid("4", "1,1MiB", {"bcast"}), linear_model());
  t.model = "m";
  const std::string text = tuning_file_text(t);
  const std::string truncated = text.substr(0, text.size() / 2);
  const std::string cut = error_text([&] { coll::parse_select_table(truncated, "cut.json"); });
  EXPECT_EQ(cut.rfind("cut.json", 0), 0u) << cut;
  std::string wrong = text;
  const size_t at = wrong.find("\"algorithm\":\"", wrong.find("\"bcast\""));
  ASSERT_NE(at, std::string::npos);
  wrong.insert(at + 13, "nosuch");
  const std::string bad = error_text([&] { coll::parse_select_table(wrong, "bad.json"); });
  EXPECT_NE(bad.find("bad.json line "), std::string::npos) << bad;
  EXPECT_NE(bad.find("nosuch"), std::string::npos) << bad;
}

}  // namespace
}  // namespace grove::tuning
