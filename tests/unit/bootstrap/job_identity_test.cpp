// Owners of resources that outlive a crash (bootstrap/job_identity.hpp):
// tokens, liveness, and the sweep that removes what dead owners left.

#include "bootstrap/job_identity.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <set>

namespace grove::job {
namespace {

// A process that existed and is gone: a child, reaped.
ProcessIdentity dead_process() {
  int ready[2];
  EXPECT_EQ(::pipe(ready), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    char byte;
    [[maybe_unused]] ssize_t n = ::read(ready[0], &byte, 1);  // until the parent read our start
    ::_exit(0);
  }
  const ProcessIdentity id{pid, start_ticks_of(pid).value_or(0)};
  EXPECT_NE(id.start_ticks, 0u);
  EXPECT_EQ(::write(ready[1], "x", 1), 1);
  ::waitpid(pid, nullptr, 0);
  ::close(ready[0]);
  ::close(ready[1]);
  return id;
}

TEST(JobIdentity, TokenParsesBack) {
  const ProcessIdentity me = self();
  EXPECT_EQ(me.pid, ::getpid());
  EXPECT_GT(me.start_ticks, 0u);
  EXPECT_EQ(ProcessIdentity::parse_prefix(me.token()), me);
  EXPECT_EQ(ProcessIdentity::parse_prefix(me.token() + "-Xy12ab"), me);
  EXPECT_EQ(ProcessIdentity::parse_prefix(me.token() + ".3.0"), me);
  EXPECT_EQ(ProcessIdentity::parse_prefix("12-34"), (ProcessIdentity{12, 34}));
}

TEST(JobIdentity, ParseRefusesWhatIsNotAToken) {
  for (const char* text : {"", "abc", "12", "12-", "-12-34", "12-x", "0-5", "99999999-5", "12--34",
                           "x12-34", "12-345678901234567890123"}) {
    EXPECT_FALSE(ProcessIdentity::parse_prefix(text).has_value()) << text;
  }
}

TEST(JobIdentity, LivenessComparesPidAndStartTime) {
  const ProcessIdentity me = self();
  EXPECT_EQ(liveness(me), Liveness::alive);
  // The same pid with another start time is another process.
  EXPECT_EQ(liveness(ProcessIdentity{me.pid, me.start_ticks + 1}), Liveness::gone);
  EXPECT_EQ(liveness(dead_process()), Liveness::gone);
}

TEST(JobIdentity, SegmentNameCarriesThisProcess) {
  EXPECT_EQ(segment_name(7, 2), "/grove-" + self().token() + ".7.2");
}

TEST(JobIdentity, SweepRemovesOnlyWhatDeadOwnersLeft) {
  char pattern[] = "/tmp/grove-identity-test.XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  const std::string dir = pattern;
  const std::string dead = dead_process().token();
  const std::string alive = self().token();
  const std::vector<std::string> names = {
      "grove-run-" + dead + "-aaaaaa",   // dead owner: removed
      "grove-run-" + alive + "-bbbbbb",  // live owner: kept
      "grove-run-cccccc",                // no owner in the name: kept
      "other-" + dead + "-dddddd",       // another prefix: kept
  };
  for (const auto& name : names)
    ASSERT_EQ(::mkdir((dir + "/" + name).c_str(), 0700), 0);
  std::vector<std::string> asked;
  const auto removed = sweep(dir, "grove-run-", [&](const std::string& path) {
    asked.push_back(path);
    return ::rmdir(path.c_str()) == 0;
  });
  EXPECT_EQ(asked, std::vector<std::string>{dir + "/" + names[0]});
  EXPECT_EQ(removed, asked);
  std::set<std::string> left;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    left.insert(e.path().filename());
  EXPECT_EQ(left, (std::set<std::string>{names[1], names[2], names[3]}));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace grove::job
