// LD_PRELOAD library for the launcher tests (tests/mp/tests.cmake): makes
// fork fail on demand, signals a child just before its exec, and checks that
// a process only signals processes it started.
//
//   SPAWN_FAULTS_FORK_FAIL_AFTER=K     fork() succeeds K times in this
//                                      process, then fails with EAGAIN (as
//                                      at RLIMIT_NPROC)
//   SPAWN_FAULTS_SIGNAL_BEFORE_EXEC=S  a process about to execve() first
//                                      raises signal S on itself (a signal
//                                      that reaches a rank between its fork
//                                      and its exec)
// (Not GROVE_*: those are grove parameters, and unknown ones are refused.)
//
// Always: kill(pid, sig) with a target that is neither this process nor one
// of its children (nor their process groups) is not sent; it prints
// "spawn_faults: refused kill(PID, SIG)" to stderr and fails with ESRCH, so
// a launcher that would signal pid 1 or every process (-1) is caught without
// harm.

#include <dlfcn.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>

namespace {

constexpr int kMaxChildren = 4096;
pid_t children[kMaxChildren];
int child_count = 0;
int forks = 0;

template <class F>
F next(const char* name) {
  return reinterpret_cast<F>(::dlsym(RTLD_NEXT, name));
}

bool started_by_me(pid_t target) {
  if (target == ::getpid() || target == -::getpid()) return true;
  for (int i = 0; i < child_count; ++i)
    if (target == children[i] || target == -children[i]) return true;
  return false;
}

}  // namespace

extern "C" {

pid_t fork() {
  static const auto real = next<pid_t (*)()>("fork");
  const char* limit = std::getenv("SPAWN_FAULTS_FORK_FAIL_AFTER");
  if (limit && forks >= std::atoi(limit)) {
    errno = EAGAIN;
    return -1;
  }
  const pid_t pid = real();
  if (pid > 0) {
    ++forks;
    if (child_count < kMaxChildren) children[child_count++] = pid;
  }
  return pid;
}

int kill(pid_t pid, int sig) {
  static const auto real = next<int (*)(pid_t, int)>("kill");
  if (!started_by_me(pid)) {
    std::fprintf(stderr, "spawn_faults: refused kill(%d, %d)\n", static_cast<int>(pid), sig);
    errno = ESRCH;
    return -1;
  }
  return real(pid, sig);
}

int execve(const char* path, char* const argv[], char* const envp[]) {
  static const auto real = next<int (*)(const char*, char* const*, char* const*)>("execve");
  if (const char* sig = std::getenv("SPAWN_FAULTS_SIGNAL_BEFORE_EXEC")) ::raise(std::atoi(sig));
  return real(path, argv, envp);
}

}  // extern "C"
