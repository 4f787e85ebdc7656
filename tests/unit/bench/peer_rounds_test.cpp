#include "suite/peer_rounds.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "grove/error.hpp"
#include "suite/subprocess.hpp"

namespace grove::bench {
namespace {

// A contender whose job is a shell line: it notes its turn in `order` and
// writes a one-row TSV (library "x": the runner relabels it).
Contender fake(const std::string& label, const std::string& dir, double seconds,
               const std::string& extra = "") {
  const std::string row = fmt::format("x\\tbcast\\tnative\\t2\\t8\\tisolated\\t0\\t{}\\n", seconds);
  return {label,
          {"/bin/sh", "-c",
           fmt::format("echo {} >> {}/order; {} printf '{}\\n{}' > \"$2\"", label, dir, extra,
                       std::string(tsv::kSpanOnlyHeader).c_str(), row),
           "fake"},
          {}};
}

struct TempDir {
  std::string path = make_temp_dir("grove-rounds-test");
  ~TempDir() { std::filesystem::remove_all(path); }
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(BenchRounds, InterleavesContendersAndRelabelsTheirRows) {
  TempDir dir;
  std::vector<std::pair<std::string, std::string>> failures;
  const auto rows = run_rounds({fake("grove", dir.path, 1e-6), fake("mpich", dir.path, 2e-6)}, 3,
                               dir.path, 30, failures);
  EXPECT_TRUE(failures.empty());
  EXPECT_EQ(slurp(dir.path + "/order"), "grove\nmpich\ngrove\nmpich\ngrove\nmpich\n");
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(rows[0].library, "grove");
  EXPECT_EQ(rows[1].library, "mpich");
  const auto cells = tsv::group(rows);
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells[0].samples, (std::vector<double>{1e-6, 1e-6, 1e-6}));
  EXPECT_EQ(cells[1].samples, (std::vector<double>{2e-6, 2e-6, 2e-6}));
}

TEST(BenchRounds, AFailingPeerIsDroppedAndAFailingGroveIsAnError) {
  TempDir dir;
  std::vector<std::pair<std::string, std::string>> failures;
  const auto rows = run_rounds(
      {fake("grove", dir.path, 1e-6), fake("gloo", dir.path, 1e-6, "echo gloo broke >&2; exit 3;")},
      2, dir.path, 30, failures);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].first, "gloo");
  EXPECT_THAT(failures[0].second, testing::HasSubstr("round 1 failed (exit status 3)"));
  EXPECT_THAT(failures[0].second, testing::HasSubstr("gloo broke"));
  EXPECT_EQ(rows.size(), 2u);  // grove's two rounds only
  EXPECT_EQ(slurp(dir.path + "/order"), "grove\ngloo\ngrove\n");

  TempDir dir2;
  EXPECT_THROW(run_rounds({fake("grove", dir2.path, 1e-6, "exit 1;")}, 1, dir2.path, 30, failures),
               Error);
}

TEST(BenchRounds, AHungJobIsEndedAtItsTimeout) {
  TempDir dir;
  std::vector<std::pair<std::string, std::string>> failures;
  const auto rows =
      run_rounds({fake("mpich", dir.path, 1e-6, "sleep 30;")}, 1, dir.path, 0.3, failures);
  EXPECT_TRUE(rows.empty());
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_THAT(failures[0].second, testing::HasSubstr("timed out"));
}

TEST(BenchRounds, PeersGetTheSuiteArgumentsAndAMissingOneSaysWhy) {
  PeerRunOptions o;
  o.ranks = 3;
  o.collectives = {"bcast", "barrier"};
  o.sizes = {1, 4096};
  o.cell_seconds = 0.3;
  o.rounds = 3;
  o.max_iterations = 100;
  o.grove_executable = "/nonexistent/tools/grove";
  o.peer_dir = "/nonexistent";
  const auto args = suite_arguments(o);
  EXPECT_EQ(args,
            (std::vector<std::string>{"--coll", "bcast,barrier", "--sizes", "1,4096", "--cadence",
                                      "isolated", "--cell-time", "0.1", "--warmup", "3",
                                      "--min-iters", "5", "--max-iters", "34"}));
  ::setenv("GROVE_PEER_DIR", "/nonexistent", 1);
  const std::string saved_path = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::setenv("PATH", "/nonexistent", 1);
  const PeerLaunch gloo = plan_peer("gloo", o, args);
  ::setenv("PATH", saved_path.c_str(), 1);
  ::unsetenv("GROVE_PEER_DIR");
  EXPECT_FALSE(gloo.status.ran);
  EXPECT_THAT(gloo.status.note, testing::HasSubstr("grove-peer-gloo not built"));
  EXPECT_THROW(plan_peer("nccl", o, args), Error);
}

}  // namespace
}  // namespace grove::bench
