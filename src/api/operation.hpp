#pragma once
// A collective call in flight: one schedule executed on one rank, with the
// buffers of the call. Comm's front ends create these (api/call.hpp);
// Request and Persistent hold them.
//
// Invariant: a call that fails, times out or is dropped (the Operation
// destroyed before it completed) cancels what it posted before it throws or
// is gone (sched::Execution::abort): nothing is written into its buffers
// afterwards. A call whose communicator lost a member (the session's failure
// notices) fails with Errc::peer_failed naming that member, whichever member
// it was waiting for.

#include <memory>
#include <optional>
#include <string>

#include "api/call_plan.hpp"
#include "api/comm_state.hpp"
#include "api/pending.hpp"
#include "sched/executor.hpp"

namespace grove::detail {

class Operation final : public Pending {
 public:
  // `plan` holds the schedule, the wire stamp and the call's name for errors.
  Operation(std::shared_ptr<CommState> comm, std::shared_ptr<const CallPlan> plan,
            sched::Buffers buffers);
  // A call without a cached plan: `what` names it in errors ("split(allgather
  // of colors)"); `stamp` identifies (collective, algorithm, parameters) on
  // the wire.
  Operation(std::shared_ptr<CommState> comm, std::string what,
            std::shared_ptr<const sched::Schedule> schedule, sched::Buffers buffers, uint8_t stamp);
  // Cancels a call still in flight (see the invariant above).
  ~Operation() override;

  // Takes the communicator's next sequence number and posts the first steps.
  void start();
  // Advances communication once; true when complete. Throws on failure.
  bool test() override;
  // Blocks under the wait policy until complete; throws on failure/timeout.
  void wait() override;
  bool active() const { return execution_.has_value() && !completed_; }
  // The call's name in errors ("bcast(root 0, 4096 B, binomial)").
  std::string what() const { return plan_->name(buffers_); }

 private:
  struct Waiter;  // the wait loop's view of this call (sched/wait_loop.hpp)

  void finish();  // throws the execution's error, if any
  void check_for_mismatch(double now);
  // Errc::peer_failed if a member of the communicator departed and the call
  // is not done after progressing what already arrived.
  void check_departures();
  // Out of line: a wait calls check_departures every round, and a member
  // departs at most once.
  [[gnu::cold, gnu::noinline]] void after_departure(int gone);
  // Cancels what is in flight (Execution::abort) and returns the error to
  // throw: `cause`, saying so if some message could not be ended.
  Error abandon(const Error& cause);

  std::shared_ptr<CommState> comm_;
  std::shared_ptr<const CallPlan> plan_;
  sched::Buffers buffers_;
  Tag base_tag_ = 0;
  // Emplaced by each start; its state comes from (and returns to) the
  // executor's pool, so a start allocates nothing after warm-up.
  std::optional<sched::Execution> execution_;
  bool completed_ = false;
  // Transport time of the last probe for mismatched stamps; negative until
  // the first check of this start, which only records the time.
  double last_mismatch_check_ = -1;
};

}  // namespace grove::detail
