#include "suite/background.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "grove/error.hpp"

namespace grove::bench {
namespace {

constexpr long kDaemonPeriodNs = 1'000'000;  // wakes every millisecond
constexpr long kDaemonWorkNs = 50'000;       // and computes for ~50 us

long cores() {
  return std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));
}

long elapsed_ns(const timespec& since) {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (now.tv_sec - since.tv_sec) * 1'000'000'000L + (now.tv_nsec - since.tv_nsec);
}

// Child side, after fork: only async-signal-safe calls (the bench may have
// threads). Dies with the bench, and never returns.
[[noreturn]] void child_main(bool busy, pid_t parent, pid_t group) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(0);  // the bench died before the request
  setpgid(0, group);                  // 0: lead a new group (the first child)
  if (busy) {
    if (setpriority(PRIO_PROCESS, 0, 19) != 0) _exit(1);
    volatile unsigned long spin = 0;
    for (;;)
      spin = spin + 1;
  }
  for (;;) {
    timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    volatile unsigned long spin = 0;
    while (elapsed_ns(start) < kDaemonWorkNs)
      spin = spin + 1;
    const timespec pause{0, kDaemonPeriodNs - kDaemonWorkNs};
    nanosleep(&pause, nullptr);
  }
}

}  // namespace

std::vector<std::string> parse_background(std::string_view spec) {
  std::vector<std::string> kinds;
  size_t pos = 0;
  while (pos <= spec.size()) {
    const size_t comma = std::min(spec.find(',', pos), spec.size());
    const std::string kind(spec.substr(pos, comma - pos));
    pos = comma + 1;
    if (kind != "nice-busy" && kind != "daemon") {
      throw Error(
          Errc::usage,
          fmt::format("--background '{}': unknown kind '{}' (nice-busy, daemon)", spec, kind));
    }
    if (std::find(kinds.begin(), kinds.end(), kind) != kinds.end()) {
      throw Error(Errc::usage, fmt::format("--background '{}': '{}' given twice", spec, kind));
    }
    kinds.push_back(kind);
  }
  return kinds;
}

BackgroundLoad::BackgroundLoad(const std::vector<std::string>& kinds) {
  std::vector<bool> busy;
  for (const std::string& kind : kinds) {
    if (kind == "nice-busy") busy.insert(busy.end(), static_cast<size_t>(cores()), true);
    if (kind == "daemon") busy.push_back(false);
  }
  const pid_t parent = getpid();
  for (const bool b : busy) {
    const pid_t pid = fork();
    if (pid < 0) {
      stop();
      throw Error(Errc::internal, "--background: fork failed");
    }
    if (pid == 0) child_main(b, parent, group_);
    // Also from here, so the group exists before any kill (no race with the
    // child's own setpgid).
    if (group_ == 0) group_ = pid;
    setpgid(pid, group_);
    pids_.push_back(pid);
  }
}

BackgroundLoad::~BackgroundLoad() {
  stop();
}

void BackgroundLoad::stop() {
  if (pids_.empty()) return;
  kill(-group_, SIGKILL);
  for (const pid_t pid : pids_) {
    kill(pid, SIGKILL);  // one that had not joined the group yet
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  pids_.clear();
  group_ = 0;
}

std::string describe_background(const std::vector<std::string>& kinds) {
  std::string out;
  for (const std::string& kind : kinds) {
    if (!out.empty()) out += ", ";
    if (kind == "nice-busy")
      out += fmt::format("{} busy loop(s) at nice 19 (one per core)", cores());
    else
      out += fmt::format("a polling daemon at normal priority (wakes every {} ms, computes ~{} us)",
                         kDaemonPeriodNs / 1'000'000, kDaemonWorkNs / 1000);
  }
  return out;
}

}  // namespace grove::bench
