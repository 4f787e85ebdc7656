#include "bootstrap/launcher.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "bootstrap/job_env.hpp"
#include "bootstrap/job_identity.hpp"
#include "bootstrap/output.hpp"
#include "bootstrap/rendezvous.hpp"
#include "bootstrap/spawn.hpp"
#include "core/params.hpp"
#include "grove/error.hpp"

namespace grove::launch {
namespace {

const params::IntParam kill_grace_ms{
    "run_kill_grace_ms", 2000, 0, 600000,
    "grove run: time between SIGTERM and SIGKILL when stopping ranks, in ms"};
const params::IntParam departure_settle_ms{
    "run_departure_settle_ms", 200, 0, 60000,
    "grove run: how long a rank that closed its bootstrap connection may take to exit before "
    "it is declared departed anyway (so the report normally carries its exit status), in ms"};
const params::BoolParam sweep_stale{
    "run_sweep_stale", true,
    "grove run: before and after the job, remove this user's run directories and shared-memory "
    "segments whose owner process is gone (off: tests that count what a job left behind)"};

void say(const std::string& line) {
  fmt::print(stderr, "grove run: {}\n", line);
}

std::string signal_text(int sig) {
  const char* name = ::strsignal(sig);
  return fmt::format("signal {} ({})", sig, name ? name : "unknown");
}

// Signals reach the poll loop through a self-pipe: the handler only writes
// the signal number. Installed for the job's lifetime, then restored.
int g_signal_pipe = -1;

void on_signal(int sig) {
  const int saved = errno;
  const auto byte = static_cast<unsigned char>(sig);
  [[maybe_unused]] const ssize_t n = ::write(g_signal_pipe, &byte, 1);
  errno = saved;
}

class SignalGuard {
 public:
  // SIGPIPE is caught, not ignored: a caught signal reverts to its default in
  // the ranks at exec, an ignored one would stay ignored there.
  static constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGPIPE};

  SignalGuard() {
    if (::pipe2(fds_, O_NONBLOCK | O_CLOEXEC) != 0) {
      throw Error(Errc::internal, fmt::format("grove run: pipe(): {}", std::strerror(errno)));
    }
    g_signal_pipe = fds_[1];
    struct sigaction action {};
    action.sa_handler = on_signal;
    action.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < std::size(kSignals); ++i) {
      ::sigaction(kSignals[i], nullptr, &old_[i]);
      // A signal ignored by whoever started grove run (nohup, a background
      // job's SIGINT) stays ignored, for the launcher and so for its ranks;
      // SIGCHLD never is, or the ranks' exit statuses would be lost.
      if (old_[i].sa_handler != SIG_IGN || kSignals[i] == SIGCHLD) {
        ::sigaction(kSignals[i], &action, nullptr);
      }
    }
  }
  ~SignalGuard() {
    for (size_t i = 0; i < std::size(kSignals); ++i)
      ::sigaction(kSignals[i], &old_[i], nullptr);
    g_signal_pipe = -1;
    ::close(fds_[0]);
    ::close(fds_[1]);
  }
  int read_fd() const { return fds_[0]; }
  std::vector<int> descriptors() const { return {fds_[0], fds_[1]}; }
  // Signals received since the last call, SIGCHLD and SIGPIPE left out.
  std::vector<int> take() {
    std::vector<int> out;
    unsigned char buffer[64];
    ssize_t n;
    while ((n = ::read(fds_[0], buffer, sizeof(buffer))) > 0)
      for (ssize_t i = 0; i < n; ++i)
        if (buffer[i] != SIGCHLD && buffer[i] != SIGPIPE) out.push_back(buffer[i]);
    return out;
  }

 private:
  int fds_[2] = {-1, -1};
  struct sigaction old_[std::size(kSignals)]{};
};

// Each rank costs up to three descriptors (connection, two output pipes).
void raise_descriptor_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
  }
}

// The descriptors the launcher keeps besides the ranks' (its self-pipe, the
// listening socket, standard streams, a few opened on the way).
constexpr rlim_t kLauncherDescriptors = 64;

void check_rank_limit(int ranks) {
  if (ranks > kMaxRanks) {
    throw Error(Errc::usage, fmt::format("grove run: -n {} is more than the {} ranks grove run "
                                         "starts on one machine",
                                         ranks, kMaxRanks));
  }
  const auto n = static_cast<rlim_t>(ranks);
  // Every rank is a process of this user, and so is the launcher: more
  // would make fork fail part way through the start.
  rlimit procs{};
  if (::getrlimit(RLIMIT_NPROC, &procs) == 0 && procs.rlim_cur != RLIM_INFINITY &&
      n + 1 > procs.rlim_cur) {
    throw Error(Errc::usage,
                fmt::format("grove run: -n {} ranks and the launcher are more processes than "
                            "this user may have (RLIMIT_NPROC, ulimit -u: {})",
                            ranks, procs.rlim_cur));
  }
  // Each rank costs the launcher up to three descriptors (its connection
  // and, with --tag-output, two output pipes); raise_descriptor_limit()
  // raises the soft limit to the hard one.
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_max != RLIM_INFINITY &&
      3 * n + kLauncherDescriptors > files.rlim_max) {
    throw Error(Errc::usage,
                fmt::format("grove run: -n {} ranks need {} descriptors in the launcher, more "
                            "than its limit (RLIMIT_NOFILE, ulimit -Hn: {})",
                            ranks, 3 * n + kLauncherDescriptors, files.rlim_max));
  }
}

std::string upper(std::string_view name) {
  std::string out;
  for (char c : name)
    out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// The launcher's environment without its own job variables and without the
// variables --param overrides, then the job-wide variables.
std::vector<std::string> base_environment(const LaunchOptions& options, const Rendezvous& rz) {
  std::set<std::string> overridden;
  for (const auto& [name, value] : options.params)
    overridden.insert("GROVE_" + upper(name));
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string_view kv(*e);
    const std::string name(kv.substr(0, kv.find('=')));
    if (name.starts_with("GROVE_JOB_") || overridden.count(name)) continue;
    env.emplace_back(kv);
  }
  std::string listed;
  std::map<std::string, std::string> last;  // a repeated --param: the last one wins
  for (const auto& [name, value] : options.params)
    last[name] = value;
  for (const auto& [name, value] : last) {
    env.push_back(fmt::format("GROVE_{}={}", upper(name), value));
    listed += (listed.empty() ? "" : ",") + name;
  }
  if (!listed.empty()) env.push_back(fmt::format("{}={}", job_env::kCmdlineParams, listed));
  env.push_back(fmt::format("{}={}", job_env::kSize, options.ranks));
  env.push_back(fmt::format("{}={}", job_env::kRendezvous, rz.socket_path()));
  env.push_back(fmt::format("{}={}", job_env::kKey, rz.key()));
  return env;
}

void validate(const LaunchOptions& options) {
  if (options.ranks < 1) {
    throw Error(Errc::usage,
                fmt::format("grove run: -n must be at least 1 (got {})", options.ranks));
  }
  check_rank_limit(options.ranks);
  if (options.command.empty()) {
    throw Error(Errc::usage, "grove run: no program given (grove run -n N PROGRAM ARGS...)");
  }
  if (options.timeout_s < 0) {
    throw Error(Errc::usage,
                fmt::format("grove run: --timeout must be positive (got {})", options.timeout_s));
  }
}

// Sets every --param in the launcher's own registry: a bad name or value
// fails here, before any rank starts, and the launcher's own waits
// (timeout_ms) follow the job's settings.
void apply_params(const LaunchOptions& options) {
  params::load_process_params();
  for (const auto& [name, value] : options.params) {
    try {
      params::Registry::global().set(name, value, params::Source::command_line);
    } catch (const Error& e) {
      throw Error(Errc::usage, fmt::format("grove run: --param {}={}: {}", name, value, e.what()));
    }
  }
}

// The CPUs this process may run on, in increasing order (empty if unknown).
std::vector<int> allowed_cpus() {
  cpu_set_t set;
  std::vector<int> cpus;
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

class Job {
 public:
  Job(const LaunchOptions& options, const std::string& path)
      : options_(options), rz_(options.ranks, options.on_failure == OnFailure::notify) {
    start_ = Clock::now();
    if (options.timeout_s > 0) {
      job_deadline_ = start_ + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(options.timeout_s));
    }
    SpawnRequest request;
    request.path = path;
    request.argv = options.command;
    request.capture_output = options.tag_output;
    request.close_in_child = signals_.descriptors();
    std::vector<std::string> env = base_environment(options, rz_);
    const std::vector<int> cpus = options.bind_to_core ? allowed_cpus() : std::vector<int>{};
    if (!cpus.empty()) env.push_back(fmt::format("{}={}", job_env::kCores, cpus.size()));
    if (options.hosts > 0) env.push_back(fmt::format("{}={}", job_env::kHosts, options.hosts));
    ranks_.resize(static_cast<size_t>(options.ranks));
    try {
      for (int rank = 0; rank < options.ranks; ++rank) {
        request.env = env;
        request.env.push_back(fmt::format("{}={}", job_env::kRank, rank));
        request.cpu = cpus.empty() ? -1 : cpus[static_cast<size_t>(rank) % cpus.size()];
        // Only rank 0 reads the launcher's stdin, and only when it is not a
        // terminal: ranks are not in the terminal's foreground process group.
        request.inherit_stdin = rank == 0 && !::isatty(STDIN_FILENO);
        const SpawnedRank spawned = spawn_rank(request);
        Process& p = ranks_[static_cast<size_t>(rank)];
        p.pid = spawned.pid;
        p.alive = true;
        if (options.tag_output) {
          outputs_.emplace_back(spawned.out_fd, STDOUT_FILENO, rank);
          outputs_.emplace_back(spawned.err_fd, STDERR_FILENO, rank);
        }
        ++live_;
      }
    } catch (...) {
      // The ranks started so far are stopped by the launcher, not failing:
      // their ends are not reported, the spawn error is.
      stop_ = Stop::failure;
      signal_live(SIGKILL);
      while (live_ > 0 && reap(true)) {
      }
      throw;
    }
  }

  int run();

 private:
  // A slot per rank; a rank whose spawn never happened (a fork failed
  // before it) has no pid and is never signalled or waited for.
  struct Process {
    pid_t pid = -1;
    bool alive = false;  // spawned and not yet reaped
  };
  enum class Stop { none, failure, timeout, signal };

  bool reap(bool block);
  void on_exit(int rank, int status);
  void stop(Stop why);
  void signal_live(int sig);
  void on_signal(int sig);
  void depart_lingering(Clock::time_point now);
  int poll_timeout_ms(Clock::time_point now) const;

  const LaunchOptions& options_;
  Rendezvous rz_;
  SignalGuard signals_;
  std::vector<Process> ranks_;
  std::vector<TaggedOutput> outputs_;
  int live_ = 0;
  Clock::time_point start_;
  std::optional<Clock::time_point> job_deadline_;
  std::optional<Clock::time_point> kill_deadline_;   // SIGKILL whoever is left
  std::optional<Clock::time_point> drain_deadline_;  // stop waiting for output
  Stop stop_ = Stop::none;
  std::optional<int> first_failure_status_;
  int interrupt_signal_ = 0;
};

bool Job::reap(bool block) {
  int status = 0;
  const pid_t pid = ::waitpid(-1, &status, block ? 0 : WNOHANG);
  if (pid <= 0) return false;
  for (size_t rank = 0; rank < ranks_.size(); ++rank) {
    if (ranks_[rank].pid == pid && ranks_[rank].alive) on_exit(static_cast<int>(rank), status);
  }
  return true;
}

void Job::on_exit(int rank, int status) {
  ranks_[static_cast<size_t>(rank)].alive = false;
  --live_;
  const std::string how = describe_wait_status(status);
  const bool failed = !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  if (failed) {
    const bool first = !first_failure_status_;
    if (first) first_failure_status_ = exit_status_of(status);
    // Ranks the launcher stopped itself are not news; the first one killed
    // by a forwarded signal is.
    if (stop_ == Stop::none || (stop_ == Stop::signal && first)) {
      say(fmt::format("rank {} {}", rank, how));
    }
    if (options_.on_failure == OnFailure::abort) stop(Stop::failure);
  }
  // After the failure is recorded: ranks told about it below may fail in
  // turn, and must not be reported as the first failure.
  rz_.depart(rank, how);
}

void Job::signal_live(int sig) {
  // alive implies a real pid > 1: never kill(-1, ...) or a group that is not a rank's.
  for (const Process& p : ranks_)
    if (p.alive && p.pid > 1) ::kill(-p.pid, sig);  // the rank's whole process group
}

void Job::stop(Stop why) {
  if (stop_ != Stop::none && stop_ != Stop::signal) return;
  if (stop_ == Stop::none) stop_ = why;
  signal_live(SIGTERM);
  if (!kill_deadline_)
    kill_deadline_ = Clock::now() + std::chrono::milliseconds(kill_grace_ms.get());
}

void Job::on_signal(int sig) {
  say(fmt::format("received {}; forwarding it to {} rank{}", signal_text(sig), live_,
                  live_ == 1 ? "" : "s"));
  if (interrupt_signal_ == 0) interrupt_signal_ = sig;
  if (stop_ == Stop::none) stop_ = Stop::signal;
  signal_live(sig);
  if (!kill_deadline_)
    kill_deadline_ = Clock::now() + std::chrono::milliseconds(kill_grace_ms.get());
}

// A rank that closed its connection but lives on is departed after the
// settle time, so collectives waiting for it do not wait for its exit.
void Job::depart_lingering(Clock::time_point now) {
  for (const auto& [rank, closed_at] : rz_.closed_connections()) {
    if (ranks_[static_cast<size_t>(rank)].alive &&
        now - closed_at >= std::chrono::milliseconds(departure_settle_ms.get())) {
      rz_.depart(rank, "closed its bootstrap connection");
    }
  }
}

int Job::poll_timeout_ms(Clock::time_point now) const {
  std::optional<Clock::time_point> next = rz_.next_deadline();
  auto consider = [&next](std::optional<Clock::time_point> t) {
    if (t) next = next ? std::min(*next, *t) : *t;
  };
  if (stop_ != Stop::timeout) consider(job_deadline_);
  consider(kill_deadline_);
  consider(drain_deadline_);
  for (const auto& [rank, closed_at] : rz_.closed_connections())
    consider(closed_at + std::chrono::milliseconds(departure_settle_ms.get()));
  if (!next) return -1;
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(*next - now).count();
  return static_cast<int>(std::clamp<int64_t>(ms, 0, 1 << 30));
}

int Job::run() {
  for (;;) {
    while (reap(false)) {
    }
    auto now = Clock::now();
    depart_lingering(now);
    const bool outputs_open = std::any_of(outputs_.begin(), outputs_.end(),
                                          [](const TaggedOutput& o) { return o.open(); });
    if (live_ == 0) {
      // Output left in the pipes is drained, but a grandchild that keeps a
      // pipe open does not hold the launcher beyond the grace period.
      if (!outputs_open) break;
      if (!drain_deadline_) drain_deadline_ = now + std::chrono::milliseconds(kill_grace_ms.get());
      if (now >= *drain_deadline_) break;
    }

    std::vector<pollfd> fds{{signals_.read_fd(), POLLIN, 0}};
    const std::vector<pollfd> rz_fds = rz_.pollfds();
    fds.insert(fds.end(), rz_fds.begin(), rz_fds.end());
    const size_t first_output = fds.size();
    for (const TaggedOutput& o : outputs_)
      fds.push_back({o.fd(), POLLIN, 0});  // a closed one has fd -1: poll skips it
    if (::poll(fds.data(), fds.size(), poll_timeout_ms(now)) < 0 && errno != EINTR) {
      throw Error(Errc::internal, fmt::format("grove run: poll(): {}", std::strerror(errno)));
    }

    for (int sig : signals_.take())
      on_signal(sig);
    while (reap(false)) {
    }
    rz_.handle(std::vector<pollfd>(fds.begin() + 1,
                                   fds.begin() + static_cast<std::ptrdiff_t>(first_output)));
    for (size_t i = 0; i < outputs_.size(); ++i)
      if (fds[first_output + i].revents) outputs_[i].drain();

    now = Clock::now();
    rz_.on_time(now);
    if (job_deadline_ && now >= *job_deadline_ && stop_ != Stop::timeout && live_ > 0) {
      say(fmt::format("job timed out after {} s; killed {} rank{}", options_.timeout_s, live_,
                      live_ == 1 ? "" : "s"));
      stop_ = Stop::none;  // a timeout takes over from any earlier stop
      stop(Stop::timeout);
    }
    if (kill_deadline_ && now >= *kill_deadline_) {
      signal_live(SIGKILL);
      kill_deadline_.reset();
    }
  }
  for (TaggedOutput& o : outputs_)
    o.close();
  if (stop_ == Stop::timeout) return kTimedOutStatus;
  if (first_failure_status_) return *first_failure_status_;
  if (interrupt_signal_) return 128 + interrupt_signal_;
  return 0;
}

}  // namespace

std::pair<std::string, std::string> parse_param_assignment(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw Error(Errc::usage,
                fmt::format("grove run: --param '{}' is not of the form name=value", text));
  }
  return {text.substr(0, eq), text.substr(eq + 1)};
}

int run_job(const LaunchOptions& options) {
  validate(options);
  apply_params(options);
  const std::string path = find_program(options.command.front());
  raise_descriptor_limit();
  // Run directories and segments of jobs that died without removing them
  // (a launcher or rank killed by SIGKILL) go before this job starts, and
  // whatever this job's ranks left behind when it ends.
  if (sweep_stale.get()) job::sweep_stale_resources(run_directory_parent());
  int status = 0;
  {
    Job job(options, path);
    status = job.run();
  }
  if (sweep_stale.get()) job::sweep_stale_resources(run_directory_parent());
  return status;
}

}  // namespace grove::launch
