#pragma once
// Child processes for the benchmark orchestration (`grove bench --peers`,
// `--plot`): run a command with a bounded wait, its output in a log file.

#include <string>
#include <utility>
#include <vector>

namespace grove::bench {

struct ProcessResult {
  int exit_code = -1;  // the child's exit status; 128+N if killed by signal N
  bool timed_out = false;
  std::string log_path;
  // The last lines of the log, for error messages.
  std::string tail(size_t max_lines = 15) const;
};

// Runs `argv` (argv[0] a path or a name looked up in PATH) with `env` added
// to this process's environment, stdout and stderr into `log_path`
// (truncated). The child leads its own process group, so on timeout the
// whole group (mpirun and its ranks) gets SIGTERM, then SIGKILL after 2 s.
// The wait sleeps between checks; it never spins.
ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::vector<std::pair<std::string, std::string>>& env,
                          const std::string& log_path, double timeout_seconds);

// The absolute path of `name` found in PATH, or "" if none is executable.
std::string find_in_path(const std::string& name);

// This program's own path (/proc/self/exe).
std::string self_executable();

// A fresh private directory under $TMPDIR or /tmp; throws grove::Error.
std::string make_temp_dir(const std::string& prefix);

}  // namespace grove::bench
