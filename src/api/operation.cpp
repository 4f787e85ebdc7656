#include "api/operation.hpp"

#include <fmt/format.h>

#include "core/params.hpp"
#include "grove/request.hpp"
#include "sched/wait.hpp"

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

Operation::~Operation() = default;

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
    throw Error(error->code(),
                fmt::format("rank {}: {}: {}", comm_->rank(), what(), error->what()));
  }
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
    const double now = comm_->transport->now();
    comm_->session->poll_failures(now);
    check_for_mismatch(now);
    return false;
  }
  finish();
  return true;
}

void Operation::wait() {
  if (!execution_ || completed_) return;
  if (execution_->done()) {  // e.g. a root whose sends completed inside start()
    finish();
    return;
  }
  const int notice_fd = comm_->session->bootstrap->notice_fd();
  try {
    sched::wait_until_described(
        *comm_->transport, notice_fd,
        [this] {
          if (execution_->done()) return true;
          // Failure notices and mismatched stamps only matter while waiting;
          // both are time-gated on one clock reading.
          const double now = comm_->transport->now();
          comm_->session->poll_failures(now);
          check_for_mismatch(now);
          return false;
        },
        [this] { return fmt::format("rank {}: {}", comm_->rank(), what()); },
        [this] { return "still pending: " + execution_->describe_pending(); });
  } catch (...) {
    completed_ = true;
    throw;
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
