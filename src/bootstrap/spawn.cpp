#include "bootstrap/spawn.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "grove/error.hpp"

namespace grove::launch {
namespace {

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// Async-signal-safe write of a message, for the child between fork and exec.
void child_say(const char* a, const char* b, const char* c) {
  for (const char* s : {a, b, c, "\n"}) {
    size_t left = std::strlen(s);
    while (left > 0) {
      const ssize_t n = ::write(STDERR_FILENO, s, left);
      if (n <= 0) return;
      s += n;
      left -= static_cast<size_t>(n);
    }
  }
}

// Every signal the launcher catches goes back to its default, as exec would
// do; an ignored one stays ignored (as exec keeps it), so dispositions the
// launcher itself inherited (nohup's SIGHUP) pass on unchanged.
void reset_caught_signals() {
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  ::sigemptyset(&default_action.sa_mask);
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    struct sigaction current {};
    if (::sigaction(sig, nullptr, &current) != 0) continue;  // not a valid signal number
    const bool caught = (current.sa_flags & SA_SIGINFO) != 0 ||
                        (current.sa_handler != SIG_DFL && current.sa_handler != SIG_IGN);
    if (caught) ::sigaction(sig, &default_action, nullptr);
  }
}

// Runs in the child after fork, with every signal blocked: only
// async-signal-safe calls until exec.
[[noreturn]] void exec_child(const SpawnRequest& request, char* const* argv, char* const* envp,
                             int out_pipe[2], int err_pipe[2], pid_t launcher) {
  // First the launcher's handlers and descriptors go, then signals are
  // unblocked: one that arrived meanwhile is delivered now, to the rank,
  // with its default action. A signal mask would survive exec: none is left.
  reset_caught_signals();
  for (int fd : request.close_in_child)
    ::close(fd);
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::setpgid(0, 0);
  // Die with the launcher: a killed `grove run` must not leave ranks behind.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != launcher) ::_exit(127);
  if (!request.inherit_stdin) {
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) {
      ::dup2(null_fd, STDIN_FILENO);
      if (null_fd != STDIN_FILENO) ::close(null_fd);
    }
  }
  if (request.cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(request.cpu, &set);
    // A refusal (e.g. a CPU taken away meanwhile) leaves the rank unbound.
    ::sched_setaffinity(0, sizeof(set), &set);
  }
  if (request.capture_output) {
    ::dup2(out_pipe[1], STDOUT_FILENO);
    ::dup2(err_pipe[1], STDERR_FILENO);
    // The pipe ends are close-on-exec, so exec drops the originals.
  }
  ::execve(request.path.c_str(), argv, envp);
  const int err = errno;
  child_say("grove run: cannot execute '", request.path.c_str(), "': ");
  child_say(std::strerror(err), "", "");
  ::_exit(127);
}

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const auto& s : strings)
    out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

}  // namespace

std::string find_program(const std::string& program) {
  if (program.empty()) throw Error(Errc::usage, "grove run: the program name is empty");
  if (program.find('/') != std::string::npos) {
    if (!is_executable_file(program)) {
      throw Error(
          Errc::usage,
          fmt::format("grove run: program '{}' does not exist or is not executable", program));
    }
    return program;
  }
  const char* path_env = std::getenv("PATH");
  const std::string path = path_env ? path_env : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  for (;;) {
    const size_t colon = path.find(':', start);
    std::string dir = path.substr(start, colon == std::string::npos ? colon : colon - start);
    if (dir.empty()) dir = ".";  // an empty PATH entry means the current directory
    const std::string candidate = dir + "/" + program;
    if (is_executable_file(candidate)) return candidate;
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  throw Error(Errc::usage, fmt::format("grove run: program '{}' not found in PATH", program));
}

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with code {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = ::strsignal(sig);
    return fmt::format("killed by signal {} ({})", sig, name ? name : "unknown");
  }
  return fmt::format("ended with wait status {:#x}", status);
}

int exit_status_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

SpawnedRank spawn_rank(const SpawnRequest& request) {
  int out_pipe[2] = {-1, -1};
  int err_pipe[2] = {-1, -1};
  auto close_pipes = [&] {
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]})
      if (fd >= 0) ::close(fd);
  };
  if (request.capture_output &&
      (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0)) {
    const int err = errno;
    close_pipes();
    throw Error(Errc::internal, fmt::format("grove run: pipe(): {}", std::strerror(err)));
  }
  // Everything the child needs is prepared before fork: after it, the child
  // may only make async-signal-safe calls.
  std::vector<char*> argv = c_strings(request.argv);
  std::vector<char*> envp = c_strings(request.env);
  const pid_t launcher = ::getpid();
  // Blocked across the fork so the child's copy of the launcher's handlers
  // can never run (see exec_child); the launcher's mask is restored at once.
  sigset_t all;
  sigset_t saved;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &saved);
  const pid_t pid = ::fork();
  if (pid == 0) exec_child(request, argv.data(), envp.data(), out_pipe, err_pipe, launcher);
  const int fork_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  if (pid < 0) {
    close_pipes();
    throw Error(Errc::internal, fmt::format("grove run: fork(): {}", std::strerror(fork_errno)));
  }
  // Also set the group here, so it exists before the launcher can signal it.
  ::setpgid(pid, pid);
  SpawnedRank rank;
  rank.pid = pid;
  if (request.capture_output) {
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    rank.out_fd = out_pipe[0];
    rank.err_fd = err_pipe[0];
    ::fcntl(rank.out_fd, F_SETFL, O_NONBLOCK);
    ::fcntl(rank.err_fd, F_SETFL, O_NONBLOCK);
  }
  return rank;
}

}  // namespace grove::launch
