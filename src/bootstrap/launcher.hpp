#pragma once
// `grove run`: starts the ranks of a job on this machine, serves their
// rendezvous (bootstrap/rendezvous.hpp), forwards signals and output, and
// turns how the ranks ended into one exit status.

#include <string>
#include <utility>
#include <vector>

namespace grove::launch {

enum class OnFailure {
  abort,   // stop every other rank (SIGTERM, then SIGKILL after run_kill_grace_ms)
  notify,  // send survivors a FailureNotice and let them continue
};

struct LaunchOptions {
  int ranks = 0;
  std::vector<std::string> command;                         // program, then its arguments
  std::vector<std::pair<std::string, std::string>> params;  // --param name=value, in order
  double timeout_s = 0;                                     // whole-job limit; 0: none
  bool tag_output = false;
  OnFailure on_failure = OnFailure::abort;
  // Rank r runs on the (r mod k)-th of the k CPUs the launcher may use, as
  // mpirun's --bind-to core (wrapping around when ranks outnumber cores: a
  // rank that yields then hands its core to a rank that shares it, instead
  // of the scheduler moving ranks between cores).
  bool bind_to_core = true;
  // > 0: tell the ranks they run on this many hosts (job_env::kHosts).
  int hosts = 0;
};

// The most ranks `grove run` starts on one machine. A job that large is
// already 8 ranks per CPU on a 512-CPU host; beyond it a typo (`-n 100000`)
// would fork until the system's process table is full. The user's
// RLIMIT_NPROC and the launcher's RLIMIT_NOFILE bound N further.
inline constexpr int kMaxRanks = 4096;

// Exit status of `grove run` when --timeout ends the job (as timeout(1)).
inline constexpr int kTimedOutStatus = 124;

// Validates `options` (grove::Error(usage) naming the problem: ranks < 1 or
// beyond kMaxRanks or the process and descriptor limits, no program, a
// program not found, a bad --param), runs the job to its end and
// returns the exit status: 0 when every rank exited 0; otherwise the first
// failing rank's exit code or 128 + its signal; kTimedOutStatus on --timeout;
// 128 + the signal when the launcher was interrupted and no rank failed.
int run_job(const LaunchOptions& options);

// Parses "name=value" (for --param); throws grove::Error(usage).
std::pair<std::string, std::string> parse_param_assignment(const std::string& text);

}  // namespace grove::launch
