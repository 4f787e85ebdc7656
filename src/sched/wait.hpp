#pragma once
// Waiting for a condition that progress on a Transport makes true, under the
// `wait_policy` parameter and bounded by `timeout_ms`:
//   spin    progress in a loop
//   lazy    progress; when nothing happened, sleep `wait_sleep_us`
//           (as MPI implementations do in finalize)
//   block   progress; when nothing happened, sleep on the transport's fd
//           (Transport::block) and `extra_fd`
//   hybrid  spin until `wait_spin_us` pass with nothing happening, then block
//           (the spin window restarts whenever progress completes something);
//           on an oversubscribed host, wait_oversubscribed=sleep makes it
//           block at once (docs/wait.md)
// The default is `hybrid`; tests with many ranks on few cores use `block` or
// `lazy` so waiting ranks leave the cores to the others. Every wait runs the
// one loop of sched/wait_loop.hpp (docs/wait.md).

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/function_ref.hpp"
#include "transport/transport.hpp"

namespace grove::sched {

enum class WaitPolicy : uint8_t { spin, lazy, block, hybrid };

struct WaitOptions {
  WaitPolicy policy = WaitPolicy::hybrid;
  // Spinning waits (spin, and hybrid's spin window) yield the core after an
  // empty poll. Worth one system call only when ranks outnumber cores.
  bool yield_when_idle = false;
  // This host runs more ranks than it has cores for them (see
  // set_host_load): a waiting rank most likely waits for one that is not
  // running, so polling again before yielding only delays it.
  bool oversubscribed = false;
  std::chrono::microseconds sleep{100};  // lazy
  std::chrono::microseconds spin{50};    // hybrid
  std::chrono::milliseconds timeout{60000};
  // The cadence of the loop (sched/wait_loop.hpp; docs/wait.md has the
  // reason for each default).
  int polls_per_round = 64;                           // wait_polls_per_round
  unsigned rounds_per_progress = 16;                  // wait_rounds_per_progress
  std::chrono::microseconds block_slice{100000};      // wait_block_slice_us
  std::chrono::microseconds shm_wake_interval{1000};  // shm_wake_interval_us
};

// The current values of wait_policy, wait_sleep_us, wait_spin_us, wait_yield,
// timeout_ms and the cadence parameters. Derived again only when a parameter changed
// (params::generation) or set_host_load was called, so a wait per collective call stays cheap.
WaitOptions wait_options_from_params();

// Tells the waits how many ranks share this host and how many cores they
// share (0: this process's CPU affinity); the session calls it once it knows.
// More ranks than cores makes the host oversubscribed (wait_yield=auto then
// yields; see yield_by_default).
void set_host_load(int local_ranks, int cores);

// wait_yield=auto's decision. A rank yields after an empty poll when the
// host is oversubscribed (the rank it waits for may need this core), or when
// it shares the host with other ranks and may run on any of `affinity_cores`
// > 1 cores (the scheduler can then put two ranks on one core, and a spin
// that never yields holds it for a whole time slice). A rank bound to one
// core, on a host with a core per rank, never yields: a yield is a system call
// per empty poll, which delays noticing the message (about 1-2 us per wait on
// a virtual machine), and hands the core to any other runnable process,
// however low its priority, for a time slice.
bool yield_by_default(bool oversubscribed, int local_ranks, int affinity_cores);
std::string_view wait_policy_name(WaitPolicy policy);

// Progresses `transport` until done() returns true. `extra_fd` (if >= 0) also
// ends a blocking sleep when readable (the launcher's failure-notice fd).
// Throws grove::Error(Errc::timeout, "<what>: timed out after N ms") when the
// bound passes; `detail`, if given, is called then and its text appended
// (e.g. Execution::describe_pending). Exceptions from done() propagate.
// done() is called first, then right after each progress() and before the
// clock is read: a wait that is already complete costs one done() call.
void wait_until(Transport& transport, int extra_fd, FunctionRef<bool()> done, std::string_view what,
                FunctionRef<std::string()> detail = {});

// Same, with explicit options instead of the parameters.
void wait_until(Transport& transport, int extra_fd, FunctionRef<bool()> done, std::string_view what,
                const WaitOptions& options, FunctionRef<std::string()> detail = {});

// For a caller that has just seen its condition false (a collective's
// Operation::wait): starts with progress(), and the name of what is waited
// for is made by `what` only if the wait times out, so a collective's name is
// formatted only when an error names it. Without `options`, the parameters
// (wait_options_from_params).
void wait_until_described(Transport& transport, int extra_fd, FunctionRef<bool()> done,
                          FunctionRef<std::string()> what, const WaitOptions& options,
                          FunctionRef<std::string()> detail = {});
void wait_until_described(Transport& transport, int extra_fd, FunctionRef<bool()> done,
                          FunctionRef<std::string()> what, FunctionRef<std::string()> detail = {});

// "<what>: timed out after N ms (<detail>)", the text of a wait's timeout
// (detail, if given, is called now).
std::string timeout_message(std::string_view what, std::chrono::milliseconds timeout,
                            FunctionRef<std::string()> detail = {});

}  // namespace grove::sched
