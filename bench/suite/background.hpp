#pragma once
// Background load for `grove bench --peers ... --background KINDS`: what
// real nodes run beside a job, started before a timed job and stopped after
// it, so each library can be compared with its quiet self of the same run.
//
//   nice-busy  one busy loop per online core at the lowest priority (nice
//              19): whatever is runnable takes the core whenever a library
//              gives it up.
//   daemon     one process at normal priority that wakes every millisecond
//              and computes for about 50 us, as a monitoring or I/O daemon
//              polls.
//
// No process outlives the load: stop() (also run by the destructor, so
// every return and exception path) kills the load's process group and reaps
// every child; each child also asks the kernel for SIGKILL when the bench
// dies (PR_SET_PDEATHSIG), which covers SIGKILL of the bench itself.

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

namespace grove::bench {

// The kinds of a comma list ("nice-busy,daemon"), each once, in order.
// Throws grove::Error(usage) naming an unknown or repeated kind, or an empty
// list.
std::vector<std::string> parse_background(std::string_view spec);

class BackgroundLoad {
 public:
  // Starts every kind of `kinds` (parse_background's result). Throws
  // grove::Error(internal) if a fork fails, after stopping what started.
  explicit BackgroundLoad(const std::vector<std::string>& kinds);
  ~BackgroundLoad();
  BackgroundLoad(const BackgroundLoad&) = delete;
  BackgroundLoad& operator=(const BackgroundLoad&) = delete;

  // Kills and reaps every child; idempotent.
  void stop();
  const std::vector<pid_t>& pids() const { return pids_; }

 private:
  pid_t group_ = 0;  // the first child's pid: every child's process group
  std::vector<pid_t> pids_;
};

// "nice 19 busy loop x2, polling daemon (1 ms period, ~50 us work)" for the
// settings lines.
std::string describe_background(const std::vector<std::string>& kinds);

}  // namespace grove::bench
