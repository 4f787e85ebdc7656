#include "api/operation.hpp"

#include <fmt/format.h>

#include "core/params.hpp"
#include "grove/request.hpp"
#include "sched/wait_loop.hpp"

namespace grove::detail {
namespace {

const params::IntParam mismatch_check_ms{
    "mismatch_check_ms", 200, 1, 3600000,
    "How often (ms) a waiting collective looks for messages of the same call stamped with another "
    "algorithm, so ranks that disagree get a named error instead of a hang"};

// Bits of a tag that identify one call on one communicator.
constexpr Tag kCallMask = (((Tag{1} << tag::kContextBits) - 1) << tag::kContextShift) |
                          (((Tag{1} << tag::kSequenceBits) - 1) << tag::kSequenceShift) |
                          (((Tag{1} << tag::kTopologyBits) - 1) << tag::kTopologyShift);

std::shared_ptr<const CallPlan> one_off_plan(std::string what,
                                             std::shared_ptr<const sched::Schedule> schedule,
                                             uint8_t stamp) {
  auto plan = std::make_shared<CallPlan>();
  plan->fixed_name = std::move(what);
  plan->schedule = std::move(schedule);
  plan->stamp = stamp;
  return plan;
}

}  // namespace

Operation::Operation(std::shared_ptr<CommState> comm, std::shared_ptr<const CallPlan> plan,
                     sched::Buffers buffers)
    : comm_(std::move(comm)), plan_(std::move(plan)), buffers_(buffers) {}

Operation::Operation(std::shared_ptr<CommState> comm, std::string what,
                     std::shared_ptr<const sched::Schedule> schedule, sched::Buffers buffers,
                     uint8_t stamp)
    : Operation(std::move(comm), one_off_plan(std::move(what), std::move(schedule), stamp),
                buffers) {}

Operation::~Operation() {
  if (!active()) return;
  try {
    (void)abandon(Error(Errc::cancelled, fmt::format("rank {}: {}: dropped before it completed",
                                                     comm_->rank(), what())));
  } catch (const std::exception&) {
    // Progress failed while cancelling; the execution's own destructor
    // keeps its state for whatever is still in flight.
  }
}

void Operation::start() {
  if (active()) {
    throw Error(Errc::invalid_argument,
                fmt::format("rank {}: {} started again before the previous start completed",
                            comm_->rank(), what()));
  }
  const uint32_t sequence = comm_->next_sequence++;
  base_tag_ = tag::make(comm_->context, sequence, tag::Topology::none, plan_->stamp, 0);
  completed_ = false;
  last_mismatch_check_ = -1;
  execution_.reset();  // the previous execution's steps are all complete
  execution_.emplace(*comm_->transport, plan_->schedule, buffers_, base_tag_);
  execution_->start();
}

void Operation::finish() {
  completed_ = true;
  if (const auto& error = execution_->error()) {
    // The failed message's siblings may still be in flight.
    throw abandon(
        Error(error->code(), fmt::format("rank {}: {}: {}", comm_->rank(), what(), error->what())));
  }
}

Error Operation::abandon(const Error& cause) {
  completed_ = true;
  const size_t left = execution_->abort(cause, [this](int peer) { return comm_->departed(peer); });
  if (left == 0) return cause;
  return Error(cause.code(),
               fmt::format("{} ({} message{} could not be cancelled: the call's buffers stay in "
                           "use until the transport completes them)",
                           cause.what(), left, left == 1 ? "" : "s"));
}

void Operation::check_departures() {
  const int gone = comm_->first_departed();
  if (gone >= 0) after_departure(gone);
}

void Operation::after_departure(int gone) {
  // A member that finished its part and exited may have sent what this
  // call still needs: take what already arrived before giving up.
  constexpr int kMaxDrainRounds = 64;
  for (int round = 0; round < kMaxDrainRounds && !execution_->done(); ++round) {
    if (!comm_->transport->progress()) break;
  }
  if (execution_->done()) return;
  const int world = comm_->world_rank(gone);
  completed_ = true;
  throw Error(Errc::peer_failed,
              fmt::format("rank {}: {}: rank {}{} departed", comm_->rank(), what(), gone,
                          world == gone ? "" : fmt::format(" (session rank {})", world)));
}

// Probes at most once per mismatch_check_ms of transport time, timed by the
// caller's clock reading (no clock read of its own).
void Operation::check_for_mismatch(double now) {
  if (last_mismatch_check_ < 0) {
    last_mismatch_check_ = now;
    return;
  }
  if (now - last_mismatch_check_ < static_cast<double>(mismatch_check_ms.get()) / 1000) return;
  last_mismatch_check_ = now;
  const auto found = comm_->transport->probe(-1, base_tag_, kCallMask);
  if (found && tag::stamp(found->tag) != plan_->stamp) {
    completed_ = true;
    throw Error(
        Errc::mismatch,
        fmt::format("rank {}: {}: rank {} runs this call with another collective, algorithm "
                    "or parameters (its stamp {:#04x}, ours {:#04x}); set the same "
                    "<collective>_algorithm on every rank",
                    comm_->rank(), what(), found->source, tag::stamp(found->tag), plan_->stamp));
  }
}

bool Operation::test() {
  if (!execution_ || completed_) return true;
  comm_->transport->progress();
  if (!execution_->done()) {
    try {
      const double now = comm_->transport->now();
      comm_->session->poll_failures(now);
      check_for_mismatch(now);
      check_departures();
    } catch (const Error& e) {
      throw abandon(e);
    }
    if (!execution_->done()) return false;
  }
  finish();
  return true;
}

struct Operation::Waiter : sched::WaiterBase {
  Operation& op;
  int notice_fd;
  bool ready() const { return op.execution_->done(); }
  // Failure notices, mismatched stamps and departures only matter while
  // waiting; all are time-gated on one clock reading.
  void check() {
    const double now = op.comm_->transport->now();
    op.comm_->session->poll_failures(now);
    op.check_for_mismatch(now);
    op.check_departures();
  }
  bool progress() { return op.comm_->transport->progress(); }
  void sleep(std::chrono::microseconds max) { op.comm_->transport->block(notice_fd, max); }
};

void Operation::wait() {
  if (!execution_ || completed_) return;
  if (execution_->done()) {  // e.g. a root whose sends completed inside start()
    finish();
    return;
  }
  const sched::WaitOptions options = sched::wait_options_from_params();
  Waiter waiter{{}, *this, comm_->session->bootstrap->notice_fd()};
  bool in_time = true;
  try {
    // The common case first: one progress completes the call, and the
    // clock is not read.
    const bool active = comm_->transport->progress();
    if (!execution_->done()) {
      in_time = sched::wait_loop(waiter, options, sched::transport_cadence(options), true, active);
    }
  } catch (const Error& e) {
    throw abandon(e);
  } catch (const std::exception& e) {
    throw abandon(
        Error(Errc::internal, fmt::format("rank {}: {}: {}", comm_->rank(), what(), e.what())));
  }
  if (!in_time) {
    throw abandon(Error(
        Errc::timeout, sched::timeout_message(
                           fmt::format("rank {}: {}", comm_->rank(), what()), options.timeout,
                           [this] { return "still pending: " + execution_->describe_pending(); })));
  }
  finish();
}

}  // namespace grove::detail

namespace grove {

Request::Request(std::shared_ptr<detail::Pending> operation) : operation_(std::move(operation)) {}
bool Request::test() {
  return operation_ ? operation_->test() : true;
}
void Request::wait() {
  if (operation_) operation_->wait();
}
MessageInfo Request::message() const {
  const std::optional<MessageInfo> info =
      operation_ ? operation_->message() : std::optional<MessageInfo>{};
  if (!info) {
    throw Error(Errc::invalid_argument,
                "Request::message(): not a completed receive (Comm::irecv, then wait or test "
                "until it returns true)");
  }
  return *info;
}

Persistent::Persistent(std::shared_ptr<detail::Operation> operation)
    : operation_(std::move(operation)) {}
void Persistent::start() {
  if (!operation_) throw Error(Errc::invalid_argument, "start() of an empty Persistent");
  operation_->start();
}
bool Persistent::test() {
  return operation_ ? operation_->test() : true;
}
void Persistent::wait() {
  if (operation_) operation_->wait();
}

}  // namespace grove
