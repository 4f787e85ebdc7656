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

const params::ChoiceParam wait_yield_param{
    "wait_yield",
    "on",
    {"auto", "on", "off"},
    "spinning waits yield the core after an empty poll: on (a system call per empty poll; keeps "
    "latency low on a shared or oversubscribed host), off, or auto (only when this host runs "
    "more ranks than it has cores, as Open MPI's yield_when_idle)"};

std::atomic<int> local_ranks{1};
std::atomic<int> host_cores{0};  // 0: not told; this process's affinity decides

// This process's CPUs, when the session did not say how many the job shares.
int affinity_cores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return CPU_COUNT(&set);
  return static_cast<int>(std::thread::hardware_concurrency());
}

// A blocking sleep is cut into slices of at most this much so a condition
// that changes without transport activity (another thread) is still seen.
constexpr std::chrono::microseconds kMaxBlockSlice{100000};

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
  const std::string& yield = wait_yield_param.get();
  static const int own_cores = affinity_cores();
  options.oversubscribed = ranks > (told > 0 ? told : own_cores);
  options.yield_when_idle = yield == "on" || (yield == "auto" && options.oversubscribed);
  cached = Cached{generation, ranks, told, options};
  return options;
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

void wait_until_described(Transport& transport, int extra_fd, FunctionRef<bool()> done,
                          FunctionRef<std::string()> what, const WaitOptions& options,
                          FunctionRef<std::string()> detail) {
  using Clock = std::chrono::steady_clock;
  // The common case first: one progress completes the wait, and the clock is
  // not read.
  bool active = transport.progress();
  if (done()) return;
  const auto start = Clock::now();
  const auto deadline = start + options.timeout;
  auto last_activity = start;
  for (;;) {
    const auto now = Clock::now();
    if (now >= deadline) {
      std::string message =
          fmt::format("{}: timed out after {} ms", what(), options.timeout.count());
      if (detail) message += fmt::format(" ({})", detail());
      throw Error(Errc::timeout, message);
    }
    if (active) {
      last_activity = now;
    } else {
      const auto left = std::chrono::duration_cast<std::chrono::microseconds>(deadline - now);
      switch (options.policy) {
        case WaitPolicy::spin:
          // Yielding costs one system call when the core is ours alone, and
          // hands the core to a peer rank when ranks outnumber cores (where a
          // pure spin would hold it for a whole scheduler time slice).
          if (options.yield_when_idle) std::this_thread::yield();
          break;
        case WaitPolicy::lazy:
          std::this_thread::sleep_for(std::min(options.sleep, left));
          break;
        case WaitPolicy::hybrid:
          if (now - last_activity < options.spin) {
            if (options.yield_when_idle) std::this_thread::yield();
            break;
          }
          [[fallthrough]];
        case WaitPolicy::block:
          transport.block(extra_fd,
                          std::min({left, kMaxBlockSlice}) + std::chrono::microseconds(1));
          break;
      }
    }
    active = transport.progress();
    if (done()) return;
  }
}

}  // namespace grove::sched
