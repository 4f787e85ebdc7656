#include "sched/wait.hpp"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <thread>

#include <fmt/format.h>

#include "core/params.hpp"
#include "core/timeouts.hpp"
#include "grove/error.hpp"
#include "sched/wait_loop.hpp"

namespace grove::sched {

namespace {

const params::ChoiceParam wait_policy_param{
    "wait_policy",
    "hybrid",
    {"spin", "lazy", "block", "hybrid"},
    "how a rank waits for communication: spin (poll, yielding the core between polls), lazy (poll, "
    "then sleep wait_sleep_us), "
    "block (sleep on the transport's fd), hybrid (spin for wait_spin_us, then block)"};
const params::IntParam wait_sleep_us_param{
    "wait_sleep_us", 100, 1, 1000000,
    "lazy wait policy: microseconds to sleep after a progress call that found nothing"};
const params::IntParam wait_spin_us_param{
    "wait_spin_us", 50, 0, 10000000,
    "hybrid wait policy: microseconds of fruitless polling before blocking on the fd"};

const params::ChoiceParam wait_oversubscribed_param{
    "wait_oversubscribed",
    "spin",
    {"spin", "sleep"},
    "the hybrid wait policy on a host running more ranks than it has cores: spin for "
    "wait_spin_us first, as on a host with a core per rank, or sleep at once, as block does (the "
    "scheduler runs a rank woken from a sleep ahead of ranks that kept the core busy; "
    "docs/wait.md has the figures for each)"};

const params::ChoiceParam wait_yield_param{
    "wait_yield",
    "auto",
    {"auto", "on", "off"},
    "spinning waits yield the core after an empty poll: on (a system call per empty poll), off, "
    "or auto (yield when this host runs more ranks than it has cores, or when this rank is not "
    "bound to one core and shares the host with another rank, so the scheduler may put two "
    "ranks on one core; a rank bound to a core of its own never yields)"};

// The loop's cadence (sched/wait_loop.hpp). Each default is the value the
// two waits had before they became one loop, measured as docs/wait.md says.
const params::IntParam wait_polls_per_round_param{
    "wait_polls_per_round", 64, 1, 1 << 20,
    "a wait on shared memory looks at the awaited word this many times between two readings of "
    "the clock and the failure notices (about a microsecond of spinning); one when the host is "
    "oversubscribed and waits yield"};
const params::IntParam wait_rounds_per_progress_param{
    "wait_rounds_per_progress", 16, 1, 1 << 20,
    "a wait on shared memory that spins on a core of its own progresses the transport once every "
    "this many rounds (a progress call costs about a hundred polls); rounds that may sleep, and "
    "every round on an oversubscribed host, progress each time"};
const params::IntParam wait_block_slice_us_param{
    "wait_block_slice_us", 100000, 1, 10000000,
    "a wait asleep on the transport's fd wakes at least this often (microseconds) to look at a "
    "condition that changes without transport activity (another thread's)"};
const params::IntParam shm_wake_interval_us_param{
    "shm_wake_interval_us", 1000, 1, 1000000,
    "a wait asleep on a shared-memory futex wakes at least this often (microseconds) to progress "
    "the transport and read failure notices: neither ends a futex sleep"};

std::atomic<int> local_ranks{1};
std::atomic<int> host_cores{0};  // 0: not told; this process's affinity decides

// This process's CPUs, when the session did not say how many the job shares.
int affinity_cores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return CPU_COUNT(&set);
  return static_cast<int>(std::thread::hardware_concurrency());
}

WaitPolicy parse_policy(std::string_view name) {
  if (name == "spin") return WaitPolicy::spin;
  if (name == "lazy") return WaitPolicy::lazy;
  if (name == "block") return WaitPolicy::block;
  return WaitPolicy::hybrid;
}

}  // namespace

std::string_view wait_policy_name(WaitPolicy policy) {
  switch (policy) {
    case WaitPolicy::spin:
      return "spin";
    case WaitPolicy::lazy:
      return "lazy";
    case WaitPolicy::block:
      return "block";
    case WaitPolicy::hybrid:
      return "hybrid";
  }
  return "?";
}

WaitOptions wait_options_from_params() {
  // Per thread, so concurrent waits never share a half-written cache.
  struct Cached {
    uint64_t generation = ~uint64_t{0};
    int local_ranks = 0;
    int cores = 0;
    WaitOptions options;
  };
  thread_local Cached cached;
  // Read the generation before the values: a change in between is seen by
  // the next call.
  const uint64_t generation = params::generation();
  const int ranks = local_ranks.load(std::memory_order_relaxed);
  const int told = host_cores.load(std::memory_order_relaxed);
  if (cached.generation == generation && cached.local_ranks == ranks && cached.cores == told)
    return cached.options;
  WaitOptions options;
  options.policy = parse_policy(wait_policy_param.get());
  options.sleep = std::chrono::microseconds(wait_sleep_us_param.get());
  options.spin = std::chrono::microseconds(wait_spin_us_param.get());
  options.timeout = std::chrono::milliseconds(timeout_ms());
  options.polls_per_round = static_cast<int>(wait_polls_per_round_param.get());
  options.rounds_per_progress = static_cast<unsigned>(wait_rounds_per_progress_param.get());
  options.block_slice = std::chrono::microseconds(wait_block_slice_us_param.get());
  options.shm_wake_interval = std::chrono::microseconds(shm_wake_interval_us_param.get());
  const std::string& yield = wait_yield_param.get();
  static const int own_cores = affinity_cores();
  options.oversubscribed = ranks > (told > 0 ? told : own_cores);
  if (options.policy == WaitPolicy::hybrid && options.oversubscribed &&
      wait_oversubscribed_param.get() == "sleep")
    options.policy = WaitPolicy::block;
  options.yield_when_idle =
      yield == "on" ||
      (yield == "auto" && yield_by_default(options.oversubscribed, ranks, own_cores));
  cached = Cached{generation, ranks, told, options};
  return options;
}

bool yield_by_default(bool oversubscribed, int local_ranks, int affinity_cores) {
  return oversubscribed || (local_ranks > 1 && affinity_cores > 1);
}

void set_host_load(int ranks, int cores) {
  local_ranks.store(ranks);
  host_cores.store(cores);
}

void wait_until(Transport& transport, int extra_fd, FunctionRef<bool()> done, std::string_view what,
                FunctionRef<std::string()> detail) {
  if (done()) return;
  wait_until_described(
      transport, extra_fd, done, [what] { return std::string(what); }, wait_options_from_params(),
      detail);
}

void wait_until(Transport& transport, int extra_fd, FunctionRef<bool()> done, std::string_view what,
                const WaitOptions& options, FunctionRef<std::string()> detail) {
  if (done()) return;
  wait_until_described(
      transport, extra_fd, done, [what] { return std::string(what); }, options, detail);
}

void wait_until_described(Transport& transport, int extra_fd, FunctionRef<bool()> done,
                          FunctionRef<std::string()> what, FunctionRef<std::string()> detail) {
  wait_until_described(transport, extra_fd, done, what, wait_options_from_params(), detail);
}

WaitCadence transport_cadence(const WaitOptions& options) {
  WaitCadence c;
  c.polls_per_round = 0;
  c.rounds_per_progress = 1;
  c.activity_restarts_spin = true;
  c.yield_after_activity = false;
  c.max_sleep = options.block_slice;
  return c;
}

WaitCadence local_memory_cadence(const WaitOptions& options) {
  // An oversubscribed host that yields: the member waited for most likely
  // needs this core, so one poll, then the core goes to another rank (and
  // the transport is progressed, as in every round that gives the core up).
  const bool yielding = options.oversubscribed && options.yield_when_idle;
  WaitCadence c;
  c.polls_per_round = yielding ? 1 : options.polls_per_round;
  c.rounds_per_progress = yielding ? 1 : options.rounds_per_progress;
  // Transport activity says nothing about when a member enters a call.
  c.activity_restarts_spin = false;
  // Work found by progress is another call's (a fence's rendezvous, a
  // non-blocking collective): yield so the ranks it involves run, rather
  // than sleep on a futex that its messages do not wake.
  c.yield_after_activity = true;
  c.max_sleep = options.shm_wake_interval;
  return c;
}

namespace {

// The schedule path's waiter over a FunctionRef condition (wait_until).
struct ConditionWaiter : WaiterBase {
  Transport& transport;
  int extra_fd;
  FunctionRef<bool()> done;
  bool ready() { return done(); }
  void check() {}
  bool progress() { return transport.progress(); }
  void sleep(std::chrono::microseconds max) { transport.block(extra_fd, max); }
};

}  // namespace

void wait_until_described(Transport& transport, int extra_fd, FunctionRef<bool()> done,
                          FunctionRef<std::string()> what, const WaitOptions& options,
                          FunctionRef<std::string()> detail) {
  // The common case first: one progress completes the wait, and the clock is
  // not read.
  const bool active = transport.progress();
  if (done()) return;
  ConditionWaiter waiter{{}, transport, extra_fd, done};
  if (wait_loop(waiter, options, transport_cadence(options), true, active)) return;
  throw Error(Errc::timeout, timeout_message(what(), options.timeout, detail));
}

std::string timeout_message(std::string_view what, std::chrono::milliseconds timeout,
                            FunctionRef<std::string()> detail) {
  std::string message = fmt::format("{}: timed out after {} ms", what, timeout.count());
  if (detail) message += fmt::format(" ({})", detail());
  return message;
}

}  // namespace grove::sched
