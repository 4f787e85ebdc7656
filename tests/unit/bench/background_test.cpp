#include "suite/background.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "grove/error.hpp"

namespace grove::bench {
namespace {

bool exists(pid_t pid) {
  return kill(pid, 0) == 0 || errno != ESRCH;
}

// Field 19 of /proc/PID/stat: the nice value.
int nice_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream rest(text.substr(text.rfind(')') + 2));  // after "(comm) "
  std::string field;
  for (int i = 3; i <= 19; ++i)
    rest >> field;
  return std::stoi(field);
}

TEST(BenchBackground, ParsesKindsAndRefusesUnknownOrRepeatedOnes) {
  EXPECT_EQ(parse_background("nice-busy,daemon"),
            (std::vector<std::string>{"nice-busy", "daemon"}));
  EXPECT_EQ(parse_background("daemon"), (std::vector<std::string>{"daemon"}));
  auto message = [](std::string_view spec) {
    try {
      parse_background(spec);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::usage);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(message("busy"), testing::HasSubstr("unknown kind 'busy' (nice-busy, daemon)"));
  EXPECT_THAT(message(""), testing::HasSubstr("unknown kind ''"));
  EXPECT_THAT(message("daemon,daemon"), testing::HasSubstr("'daemon' given twice"));
}

TEST(BenchBackground, StartsOneNiceBusyLoopPerCoreAndADaemonAndStopsThemAll) {
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  std::vector<pid_t> pids;
  {
    BackgroundLoad load({"nice-busy", "daemon"});
    pids = load.pids();
    ASSERT_EQ(pids.size(), static_cast<size_t>(cores) + 1);
    for (const pid_t pid : pids)
      EXPECT_TRUE(exists(pid)) << pid;
    // Each child sets its own priority first thing, once it gets a core;
    // wait for each (bounded: 10 s on a loaded machine).
    for (long i = 0; i < cores; ++i) {
      const pid_t pid = pids[static_cast<size_t>(i)];
      for (int tries = 0; tries < 1000 && nice_of(pid) != 19; ++tries)
        usleep(10'000);
      EXPECT_EQ(nice_of(pid), 19) << pid;
    }
    EXPECT_EQ(nice_of(pids.back()), nice_of(getpid()));  // the daemon: normal priority
    load.stop();
    EXPECT_TRUE(load.pids().empty());
    load.stop();  // idempotent
  }
  for (const pid_t pid : pids)
    EXPECT_FALSE(exists(pid)) << pid;  // killed and reaped: no zombie either
}

TEST(BenchBackground, AnExceptionLeavesNoProcessBehind) {
  std::vector<pid_t> pids;
  try {
    BackgroundLoad load({"daemon"});
    pids = load.pids();
    throw std::runtime_error("a job failed");
  } catch (const std::runtime_error&) {
  }
  ASSERT_EQ(pids.size(), 1u);
  EXPECT_FALSE(exists(pids[0]));
}

}  // namespace
}  // namespace grove::bench
