#pragma once
// Starting and describing the rank processes of `grove run`.

#include <sys/types.h>

#include <string>
#include <vector>

namespace grove::launch {

// Resolves `program` like execvp does: a name containing '/' is used as is,
// otherwise PATH is searched. Throws grove::Error(usage) naming the program
// when nothing executable is found.
std::string find_program(const std::string& program);

// "exited with code 2", "killed by signal 9 (Killed)".
std::string describe_wait_status(int status);
// The shell convention: the exit code, or 128 + the signal number.
int exit_status_of(int status);

struct SpawnRequest {
  std::string path;               // resolved program
  std::vector<std::string> argv;  // argv[0] is the program as the user wrote it
  std::vector<std::string> env;   // complete environment, "NAME=value"
  bool capture_output = false;    // pipe stdout/stderr back to the launcher
  bool inherit_stdin = false;     // otherwise stdin is /dev/null
  int cpu = -1;                   // >= 0: the child runs on this CPU only
  // The launcher's own descriptors the child closes before anything else
  // (its signal self-pipe): close-on-exec is too late for a signal that
  // arrives between fork and exec.
  std::vector<int> close_in_child;
};

struct SpawnedRank {
  pid_t pid = -1;
  int out_fd = -1;  // read ends when capture_output, else -1
  int err_fd = -1;
};

// Forks and execs one rank. The child leads its own process group (so the
// launcher can signal a rank together with anything it started, and a
// terminal's Ctrl-C reaches ranks only through the launcher), gets default
// signal dispositions and an empty signal mask, and is killed if the launcher
// dies. Every signal is blocked across the fork, and the child resets each
// caught signal to its default before unblocking: a signal sent to the rank
// before its exec acts on the rank (a SIGTERM ends it), never runs the
// launcher's handler in the child. Throws grove::Error naming the cause if
// the fork or pipes fail (no child then exists); a failing exec makes the
// child print the reason and exit with 127.
SpawnedRank spawn_rank(const SpawnRequest& request);

}  // namespace grove::launch
