#include "suite/subprocess.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "grove/error.hpp"

namespace grove::bench {
namespace {

using Clock = std::chrono::steady_clock;

// Waits for `pid` until `deadline`; true if it exited (status in *status).
bool wait_until(pid_t pid, Clock::time_point deadline, int* status) {
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    const pid_t done = waitpid(pid, status, WNOHANG);
    if (done == pid) return true;
    if (done < 0 && errno != EINTR) {
      *status = 0;
      return true;
    }
    if (Clock::now() >= deadline) return false;
    // Short first checks keep quick commands quick; then 50 ms naps.
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
}

}  // namespace

std::string ProcessResult::tail(size_t max_lines) const {
  std::ifstream in(log_path);
  std::deque<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    lines.push_back(line);
    if (lines.size() > max_lines) lines.pop_front();
  }
  std::string text;
  for (const auto& l : lines)
    text += "  | " + l + "\n";
  return text;
}

std::string find_in_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t pos = 0;
  while (pos <= dirs.size()) {
    const size_t colon = std::min(dirs.find(':', pos), dirs.size());
    const std::string dir = dirs.substr(pos, colon - pos);
    pos = colon + 1;
    if (dir.empty()) continue;
    const std::string candidate = dir + "/" + name;
    struct stat st {};
    if (stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return "";
}

std::string self_executable() {
  std::error_code ec;
  const auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error(Errc::internal, "cannot read /proc/self/exe");
  return path.string();
}

std::string make_temp_dir(const std::string& prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = fmt::format("{}/{}-XXXXXX", tmp && *tmp ? tmp : "/tmp", prefix);
  if (!mkdtemp(pattern.data())) {
    throw Error(Errc::usage, fmt::format("cannot create a directory like '{}': {}", pattern,
                                         std::strerror(errno)));
  }
  return pattern;
}

ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::vector<std::pair<std::string, std::string>>& env,
                          const std::string& log_path, double timeout_seconds) {
  if (argv.empty()) throw Error(Errc::internal, "run_process: empty command");
  const std::string program = find_in_path(argv[0]);
  if (program.empty()) throw Error(Errc::usage, fmt::format("'{}' not found", argv[0]));
  const int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log < 0) throw Error(Errc::usage, fmt::format("cannot write log '{}'", log_path));
  std::vector<char*> args;
  for (const auto& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  const pid_t pid = fork();
  if (pid < 0) {
    close(log);
    throw Error(Errc::internal, "fork failed");
  }
  if (pid == 0) {
    setpgid(0, 0);
    dup2(log, STDOUT_FILENO);
    dup2(log, STDERR_FILENO);
    const int null_in = open("/dev/null", O_RDONLY);
    if (null_in >= 0) dup2(null_in, STDIN_FILENO);
    for (const auto& [name, value] : env)
      setenv(name.c_str(), value.c_str(), 1);
    execv(program.c_str(), args.data());
    dprintf(STDERR_FILENO, "exec %s: %s\n", program.c_str(), std::strerror(errno));
    _exit(127);
  }
  close(log);
  setpgid(pid, pid);  // also from here, so the group exists before any kill

  ProcessResult result;
  result.log_path = log_path;
  const auto deadline =
      Clock::now() + std::chrono::milliseconds(static_cast<long>(timeout_seconds * 1000));
  int status = 0;
  if (!wait_until(pid, deadline, &status)) {
    result.timed_out = true;
    kill(-pid, SIGTERM);
    if (!wait_until(pid, Clock::now() + std::chrono::seconds(2), &status)) {
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
    }
  }
  // Ranks the child left behind in its group (a crashed mpirun's) go too.
  kill(-pid, SIGKILL);
  if (WIFEXITED(status))
    result.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    result.exit_code = 128 + WTERMSIG(status);
  return result;
}

}  // namespace grove::bench
