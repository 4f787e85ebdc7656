// Selection (coll/select.hpp): the built-in table against the rules it
// replaced, precedence, completion of open arguments, and tuning files.

#include "coll/select.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "coll/allgather.hpp"
#include "coll/allgatherv.hpp"
#include "coll/allreduce.hpp"
#include "coll/alltoall.hpp"
#include "coll/alltoallv.hpp"
#include "coll/barrier.hpp"
#include "coll/bcast.hpp"
#include "coll/gather.hpp"
#include "coll/reduce.hpp"
#include "coll/reduce_scatter.hpp"
#include "coll/scatter.hpp"
#include "core/params.hpp"
#include "grove/error.hpp"
#include "support/auto_choice.hpp"

namespace grove::coll {
namespace {

// ---- The rules the built-in table replaced, as the code held them (MPICH's
// thresholds, Open MPI's scatter rule), kept here as the reference.
int pof2(int n) {
  int p = 1;
  while (p * 2 <= n)
    p *= 2;
  return p;
}
std::string old_bcast(int n, size_t bytes) {
  return bytes < 12288 || n < 8 ? "binomial" : "scatter_allgather";
}
std::string old_scatter(int n, size_t block) {
  return n > 10 && block < 300 ? "binomial" : "flat";
}
std::string old_allgather(int n, size_t block) {
  const size_t total = block * static_cast<size_t>(n);
  if ((n & (n - 1)) == 0 && total < 524288) return "recursive_doubling";
  if (total < 81920) return "bruck";
  return "ring";
}
std::string old_allgatherv(size_t total) {
  return total < 81920 ? "gather_bcast" : "ring";
}
std::string old_alltoall(int n, size_t block) {
  if (block <= 256 && n >= 8) return "bruck";
  if (block < 32768) return "linear";
  return "pairwise";
}
std::string old_reduce(int n, size_t count, size_t elem, const char* tree) {
  return count * elem <= 2048 || count < static_cast<size_t>(pof2(n)) ? tree : "rabenseifner";
}
std::string old_reduce_scatter(int n, size_t count, size_t elem) {
  return count * elem * static_cast<size_t>(n) < 524288 ? "recursive_halving" : "ring";
}
uint32_t old_posts(uint32_t n, uint64_t peer, uint64_t total) {
  if (total <= 66000 || n <= 8) return n;
  if (peer <= 64 * 1024) return std::min<uint32_t>(n, 32);
  if (peer <= 1024 * 1024) return std::min<uint32_t>(n, 16);
  if (peer <= 4 * 1024 * 1024) return n <= 16 ? n : 8;
  if (peer <= 8 * 1024 * 1024) return std::min<uint32_t>(n, 4);
  return n <= 32 ? 4 : 1;
}

TEST(Select, BuiltInTableReproducesTheRulesItReplaced) {
  const std::vector<int> ranks = {1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 16, 31, 32, 33, 64, 100};
  std::vector<size_t> sizes = {0, 1, 4, 8, 255, 256, 257, 299, 300, 2047, 2048, 2049, 4096};
  for (size_t s : {12287, 12288, 32767, 32768, 65536, 65537, 81919, 81920, 524287, 524288, 1 << 20,
                   (1 << 20) + 1, 4 << 20, (4 << 20) + 1, 8 << 20, (8 << 20) + 1})
    sizes.push_back(s);
  int cases = 0;
  for (int n : ranks) {
    for (size_t b : sizes) {
      SCOPED_TRACE(::testing::Message() << n << " ranks, " << b << " B");
      EXPECT_EQ(resolved(BcastArgs{0, n, 0, b, {}}).name, old_bcast(n, b));
      EXPECT_EQ(resolved(ScatterArgs{0, n, 0, b, {}}).name, old_scatter(n, b));
      EXPECT_EQ(resolved(GatherArgs{0, n, 0, b, {}}).name, "binomial");
      EXPECT_EQ(resolved(AllgatherArgs{0, n, b, false, {}}).name, old_allgather(n, b));
      EXPECT_EQ(resolved(AllgathervArgs{0, n, std::vector<size_t>(n, b), {}, false, {}}).name,
                old_allgatherv(b * static_cast<size_t>(n)));
      EXPECT_EQ(resolved(AlltoallArgs{0, n, b, false, {}}).name, old_alltoall(n, b));
      EXPECT_EQ(resolved(BarrierArgs{0, n, {}}).name, "dissemination");
      for (Datatype t : {Datatype::uint8, Datatype::int32, Datatype::float64}) {
        const size_t elem = datatype_size(t);
        const size_t count = b / elem;
        EXPECT_EQ(resolved(ReduceArgs{0, n, 0, count, t, ReduceOp::sum, false, {}}).name,
                  old_reduce(n, count, elem, "binomial"));
        EXPECT_EQ(resolved(AllreduceArgs{0, n, count, t, ReduceOp::sum, false, {}}).name,
                  old_reduce(n, count, elem, "recursive_doubling"));
        EXPECT_EQ(resolved(ReduceScatterArgs{0, n, count, t, ReduceOp::sum, {}}).name,
                  old_reduce_scatter(n, count, elem));
      }
      // The posting depth of a pairwise alltoall, automatic or forced.
      const uint64_t total = b * static_cast<uint64_t>(n);
      const uint32_t want = old_posts(static_cast<uint32_t>(n), b, total);
      EXPECT_EQ(pairwise_depth(n, 0, resolved(AlltoallArgs{0, n, b, false, {}}, "pairwise")), want);
      if (old_alltoall(n, b) == "pairwise") {
        EXPECT_EQ(pairwise_depth(n, 0, resolved(AlltoallArgs{0, n, b, false, {}})), want);
      }
      ++cases;
    }
  }
  EXPECT_EQ(cases, static_cast<int>(ranks.size() * sizes.size()));
}

TEST(Select, BuiltInTableEndsWithARowEveryScheduleCanServe) {
  // Every collective's last built-in row has no condition and a schedule, so
  // a non-blocking call always finds a row.
  for (const auto& rows : builtin_select_table().collectives) {
    ASSERT_FALSE(rows.rows.empty());
    const SelectRow& last = rows.rows.back();
    EXPECT_EQ(last.conditions(), "every call") << collective_name(rows.collective);
    EXPECT_TRUE(algorithm_info(collective_name(rows.collective), last.algorithm.name).schedule);
  }
  EXPECT_EQ(builtin_select_table().collectives.size(), 11u);
}

CallFacts bcast_facts(int n, uint64_t bytes) {
  return facts(BcastArgs{0, n, 0, bytes, {}});
}

TEST(Select, ShmIsChosenForBlockingCallsOnlyAndCanBeForced) {
  const CallFacts f = bcast_facts(4, 64);
  const auto runs = [](const AlgorithmSpec&) { return std::string(); };
  EXPECT_EQ(choose(f, "auto", true, runs).spec.name, "shm");
  EXPECT_EQ(choose(f, "auto", false, runs).spec.name, "binomial");
  // For a non-blocking call the shm row is passed over, saying why.
  const std::vector<std::string> over = choose(f, "auto", false, runs).passed_over;
  ASSERT_EQ(over.size(), 1u);
  EXPECT_EQ(over[0],
            "built-in row 1 (every call): shm: shm serves blocking calls only (this call "
            "is non-blocking or persistent)");
  // shm that cannot run (the front end says why) is passed over, with the reason kept.
  const auto no_segment = [](const AlgorithmSpec& s) {
    return s.name == "shm" ? std::string("no segment") : std::string();
  };
  const Choice c = choose(f, "auto", true, no_segment);
  EXPECT_EQ(c.spec.name, "binomial");
  ASSERT_EQ(c.passed_over.size(), 1u);
  EXPECT_NE(c.passed_over[0].find("no segment"), std::string::npos) << c.passed_over[0];
  // Forced.
  EXPECT_EQ(choose(f, "shm", true, runs).from, ChoiceFrom::forced);
  try {
    choose(f, "shm", false, runs);
    ADD_FAILURE() << "a non-blocking call was given shm";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("bcast_algorithm=shm cannot run this call: shm serves "
                                         "blocking calls only"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(choose(f, "shm", true, no_segment), Error);
}

TEST(Select, ForcedParameterBeatsTuningFileBeatsBuiltIn) {
  const std::string path = ::testing::TempDir() + "grove_select_precedence.json";
  {
    std::ofstream out(path);
    out << R"({
  "format": "grove-selection/1",
  // comments are allowed
  "bcast": [
    {"max_bytes": 100, "algorithm": "chain", "note": "test row"}
  ]
})";
  }
  const CallFacts small = bcast_facts(16, 64);
  const CallFacts large = bcast_facts(16, 1 << 20);
  EXPECT_EQ(choose(small, "auto", false).spec.name, "binomial");
  {
    params::ScopedSet tuning("tuning_file", path);
    const Choice c = choose(small, "auto", false);
    EXPECT_EQ(c.spec.name, "chain");
    EXPECT_EQ(c.from, ChoiceFrom::tuning_file);
    EXPECT_EQ(c.reason, path + " line 5 (max_bytes 100)");
    // No tuning row matches: the built-in table decides.
    EXPECT_EQ(choose(large, "auto", false).spec.name, "scatter_allgather");
    EXPECT_EQ(choose(large, "auto", false).from, ChoiceFrom::built_in);
    {
      params::ScopedSet forced("bcast_algorithm", "knomial:3");
      const Choice f = choose(small, false);
      EXPECT_EQ(f.spec.to_string(), "knomial:3");
      EXPECT_EQ(f.from, ChoiceFrom::forced);
      EXPECT_EQ(f.reason, "bcast_algorithm=knomial:3");
    }
  }
  EXPECT_EQ(choose(small, "auto", false).spec.name, "binomial");  // unloaded again
  std::remove(path.c_str());
}

TEST(Select, OpenArgumentsComeFromTheFirstMatchingRowOfTheAlgorithm) {
  const std::string path = ::testing::TempDir() + "grove_select_complete.json";
  {
    std::ofstream out(path);
    out << R"({"format": "grove-selection/1",
  "bcast": [
    {"max_bytes": 4096, "algorithm": "binomial"},
    {"max_ranks": 8, "algorithm": "pipeline:seg=8KiB"},
    {"algorithm": "pipeline:seg=32KiB"}
  ],
  "alltoall": [{"min_bytes": "1MiB", "algorithm": "pairwise:posts=3"}]
})";
  }
  params::ScopedSet tuning("tuning_file", path);
  EXPECT_EQ(resolve(bcast_facts(4, 1 << 20), parse_algorithm("bcast", "pipeline")).segment,
            8u * 1024);
  EXPECT_EQ(resolve(bcast_facts(16, 1 << 20), parse_algorithm("bcast", "pipeline")).segment,
            32u * 1024);
  // Given explicitly: kept.
  EXPECT_EQ(resolve(bcast_facts(4, 1 << 20), parse_algorithm("bcast", "pipeline:seg=1KiB")).segment,
            1024u);
  EXPECT_EQ(resolved(AlltoallArgs{0, 16, 1 << 20, false, {}}, "pairwise").posts, 3u);
  // Below the tuning row, the built-in pairwise rows apply.
  EXPECT_EQ(resolved(AlltoallArgs{0, 64, 64 * 1024, false, {}}, "pairwise").posts, 32u);
  std::remove(path.c_str());
}

TEST(Select, RowsOfAlgorithmsThatCannotRunArePassedOver) {
  const SelectTable table = parse_select_table(R"({"format": "grove-selection/1",
    "allgather": [{"algorithm": "neighbor_exchange"}]})",
                                               "t.json");
  const std::string path = ::testing::TempDir() + "grove_select_odd.json";
  {
    std::ofstream out(path);
    out << format_select_table(table);
  }
  params::ScopedSet tuning("tuning_file", path);
  const CallFacts even = facts(AllgatherArgs{0, 4, 1 << 20, false, {}});
  const CallFacts odd = facts(AllgatherArgs{0, 5, 1 << 20, false, {}});
  EXPECT_EQ(choose(even, "auto", false).spec.name, "neighbor_exchange");
  const Choice c = choose(odd, "auto", false);
  EXPECT_EQ(c.spec.name, "ring");
  ASSERT_EQ(c.passed_over.size(), 2u);  // the tuning row, then the built-in shm row
  EXPECT_NE(c.passed_over[0].find("even number of ranks, not 5"), std::string::npos);
  EXPECT_NE(c.passed_over[1].find("shm serves blocking calls only"), std::string::npos);
  EXPECT_THROW(choose(odd, "neighbor_exchange", false), Error);
  std::remove(path.c_str());
}

void expect_refused(const std::string& text, const std::string& needle) {
  try {
    parse_select_table(text, "bad.json");
    ADD_FAILURE() << "accepted: " << text;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << "wanted '" << needle << "' in: " << e.what();
  }
}

TEST(Select, MalformedTablesAreRefusedWithFileLineAndCause) {
  const std::string head = "{\n  \"format\": \"grove-selection/1\",\n";
  expect_refused(head + "  \"bcast\": [\n    {\"algorithm\": \"binomial\",}\n  ]\n}",
                 "bad.json line 4: not valid JSON");
  expect_refused(head + "  \"bcast\": [\n    {\"algorithm\": \"fastest\"}\n  ]\n}",
                 "bad.json line 4: bcast algorithm 'fastest': unknown algorithm");
  expect_refused(head + "  \"bcast\": [\n    {\"max_byte\": 3, \"algorithm\": \"flat\"}\n  ]\n}",
                 "bad.json line 4: unknown key 'max_byte'");
  expect_refused(head +
                     "  \"bcast\": [\n  {\"algorithm\": \"flat\"},\n  {\"max_bytes\": -1, "
                     "\"algorithm\": \"flat\"}\n]}",
                 "bad.json line 5: max_bytes is -1");
  expect_refused(head +
                     "  \"bcast\": [{\"min_ranks\": 9, \"max_ranks\": 8, \"algorithm\": "
                     "\"flat\"}]}",
                 "bad.json line 3: min_ranks 9 is above max_ranks 8");
  expect_refused(head + "  \"bcast\": [{\"max_bytes\": \"lots\", \"algorithm\": \"flat\"}]}",
                 "line 3:");
  expect_refused(head + "  \"bcast\": [{\"algorithm\": \"auto\"}]}", "cannot choose 'auto'");
  expect_refused(head + "  \"bcast\": [{\"max_ranks\": 2}]}", "has no algorithm");
  expect_refused(head + "  \"teleport\": [{\"algorithm\": \"flat\"}]}",
                 "unknown collective 'teleport'");
  expect_refused("{\"bcast\": []}",
                 "bad.json line 1: \"format\": \"grove-selection/1\" is missing");
  expect_refused("", "bad.json line 1: not valid JSON");
  EXPECT_THROW(load_select_table("/nonexistent/grove.json"), Error);
}

TEST(Select, TablesRoundTripThroughTheirText) {
  const SelectTable& builtin = builtin_select_table();
  const std::string text = format_select_table(builtin);
  const SelectTable again = parse_select_table(text, "again");
  EXPECT_EQ(format_select_table(again), text);
  ASSERT_EQ(again.collectives.size(), builtin.collectives.size());
  for (size_t i = 0; i < again.collectives.size(); ++i) {
    const auto& a = again.collectives[i].rows;
    const auto& b = builtin.collectives[i].rows;
    ASSERT_EQ(a.size(), b.size());
    for (size_t j = 0; j < a.size(); ++j) {
      EXPECT_EQ(a[j].algorithm, b[j].algorithm);
      EXPECT_EQ(a[j].conditions(), b[j].conditions());
      EXPECT_EQ(a[j].note, b[j].note);
    }
  }
}

TEST(Select, LargeBcastAcrossHostsRunsThePipelinedChain) {
  // 8 hosts x 1 rank, 1 MiB: the multi-host row, with its 16 KiB segment,
  // for blocking and non-blocking calls alike. (The front end passes over
  // shm on a communicator that spans hosts: it has no segment.)
  const auto no_segment = [](const AlgorithmSpec& s) {
    return s.name == "shm" ? std::string("no segment") : std::string();
  };
  CallFacts f = bcast_facts(8, 1 << 20);
  f.hosts = 8;
  f.ranks_per_node = 1;
  for (bool blocking : {true, false}) {
    const Choice c = choose(f, "auto", blocking, no_segment);
    EXPECT_EQ(c.spec.name, "pipeline");
    EXPECT_EQ(c.spec.segment, 16384u);
    EXPECT_EQ(c.reason, "built-in row 3 (min_ranks 3, min_bytes 524288, min_hosts 2)") << c.reason;
  }
  // Its edges: one byte less, two ranks, or one host keep MPICH's rules.
  f.bytes = (512 << 10) - 1;
  EXPECT_EQ(choose(f, "auto", false).spec.name, "scatter_allgather");
  f = bcast_facts(2, 1 << 20);
  f.hosts = 2;
  f.ranks_per_node = 1;
  EXPECT_EQ(choose(f, "auto", false).spec.name, "binomial");
  f = bcast_facts(8, 1 << 20);
  EXPECT_EQ(choose(f, "auto", false).spec.name, "scatter_allgather");
  // Several ranks per host: hier for blocking calls, the chain for the rest.
  f.hosts = 4;
  f.ranks_per_node = 2;
  EXPECT_EQ(choose(f, "auto", true, no_segment).spec.name, "hier");
  EXPECT_EQ(choose(f, "auto", false).spec.name, "pipeline");
}

TEST(Select, LeadersAcrossHostsTakeTheBandwidthRows) {
  // The leaders of a hierarchical call: one rank per host. bcast from 12 KiB
  // at 3..7 ranks: scatter_allgather (one host keeps MPICH's binomial).
  CallFacts f = bcast_facts(4, 64 << 10);
  f.hosts = 4;
  f.ranks_per_node = 1;
  Choice c = choose(f, "auto", false);
  EXPECT_EQ(c.spec.name, "scatter_allgather");
  EXPECT_EQ(c.reason, "built-in row 4 (min_ranks 3, min_bytes 12288, min_hosts 2)") << c.reason;
  f.bytes = 12287;
  EXPECT_EQ(choose(f, "auto", false).spec.name, "binomial");
  f = bcast_facts(4, 64 << 10);
  EXPECT_EQ(choose(f, "auto", false).spec.name, "binomial");
  // allgatherv up to 8 ranks across hosts: ring, whatever the total;
  // 9 ranks, or one host, keep gather_bcast below 80 KiB in all.
  CallFacts g;
  g.collective = Collective::allgatherv;
  g.ranks = 4;
  g.bytes = 16 << 10;
  g.total = 64 << 10;
  g.hosts = 4;
  g.ranks_per_node = 1;
  c = choose(g, "auto", false);
  EXPECT_EQ(c.spec.name, "ring");
  EXPECT_EQ(c.reason, "built-in row 1 (max_ranks 8, min_hosts 2)") << c.reason;
  g.ranks = 9;
  g.hosts = 9;
  EXPECT_EQ(choose(g, "auto", false).spec.name, "gather_bcast");
  g.ranks = 4;
  g.hosts = 1;
  EXPECT_EQ(choose(g, "auto", false).spec.name, "gather_bcast");
}

TEST(Select, ShowListsTheRowsInPrecedenceOrder) {
  params::ScopedSet forced("scatter_algorithm", "chain");
  const std::string shown = describe_rows(Collective::scatter, 16);
  EXPECT_EQ(shown.find("forced: scatter_algorithm=chain"), 2u) << shown;
  EXPECT_NE(shown.find("min_ranks 11"), std::string::npos) << shown;
  // Rows whose ranks range excludes N are left out.
  EXPECT_EQ(describe_rows(Collective::scatter, 4).find("min_ranks 11"), std::string::npos);
}

}  // namespace
}  // namespace grove::coll
