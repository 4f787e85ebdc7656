#include "coll/operation.hpp"

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

}  // namespace

Operation::Operation(std::shared_ptr<CommState> comm, std::string what,
                     std::shared_ptr<const sched::Schedule> schedule, sched::Buffers buffers,
                     uint8_t stamp)
    : comm_(std::move(comm)),
      what_(std::move(what)),
      schedule_(std::move(schedule)),
      buffers_(buffers),
      stamp_(stamp) {}

Operation::~Operation() = default;

void Operation::start() {
  if (active()) {
    throw Error(Errc::invalid_argument,
                fmt::format("rank {}: {} started again before the previous start completed",
                            comm_->rank(), what_));
  }
  const uint32_t sequence = comm_->next_sequence++;
  base_tag_ = tag::make(comm_->context, sequence, tag::Topology::none, stamp_, 0);
  completed_ = false;
  execution_.reset();  // the previous execution's steps are all complete
  execution_ = std::make_unique<sched::Execution>(*comm_->transport, schedule_, buffers_, base_tag_);
  last_mismatch_check_ = comm_->transport->now();
  execution_->start();
}

void Operation::finish() {
  completed_ = true;
  if (const auto& error = execution_->error()) {
    throw Error(error->code(), fmt::format("rank {}: {}: {}", comm_->rank(), what_, error->what()));
  }
}

void Operation::check_for_mismatch() {
  const double now = comm_->transport->now();
  if (now - last_mismatch_check_ < static_cast<double>(mismatch_check_ms.get()) / 1000) return;
  last_mismatch_check_ = now;
  const auto found = comm_->transport->probe(-1, base_tag_, kCallMask);
  if (found && tag::stamp(found->tag) != stamp_) {
    completed_ = true;
    throw Error(Errc::mismatch,
                fmt::format("rank {}: {}: rank {} runs this call with another collective, algorithm "
                            "or parameters (its stamp {:#04x}, ours {:#04x}); set the same "
                            "<collective>_algorithm on every rank",
                            comm_->rank(), what_, found->source, tag::stamp(found->tag), stamp_));
  }
}

bool Operation::test() {
  if (!execution_ || completed_) return true;
  comm_->transport->progress();
  comm_->session->poll_failures();
  if (!execution_->done()) {
    check_for_mismatch();
    return false;
  }
  finish();
  return true;
}

void Operation::wait() {
  if (!execution_ || completed_) return;
  const int notice_fd = comm_->session->bootstrap->notice_fd();
  try {
    sched::wait_until(
        *comm_->transport, notice_fd,
        [this] {
          comm_->session->poll_failures();
          if (execution_->done()) return true;
          check_for_mismatch();
          return false;
        },
        fmt::format("rank {}: {}", comm_->rank(), what_),
        [this] { return "still pending: " + execution_->describe_pending(); });
  } catch (...) {
    completed_ = true;
    throw;
  }
  finish();
}

std::shared_ptr<Operation> start_operation(std::shared_ptr<CommState> comm, std::string what,
                                           std::shared_ptr<const sched::Schedule> schedule,
                                           sched::Buffers buffers, uint8_t stamp) {
  auto operation = std::make_shared<Operation>(std::move(comm), std::move(what),
                                               std::move(schedule), buffers, stamp);
  operation->start();
  return operation;
}

}  // namespace grove::detail

namespace grove {

Request::Request(std::shared_ptr<detail::Operation> operation) : operation_(std::move(operation)) {}
bool Request::test() { return operation_ ? operation_->test() : true; }
void Request::wait() {
  if (operation_) operation_->wait();
}

Persistent::Persistent(std::shared_ptr<detail::Operation> operation)
    : operation_(std::move(operation)) {}
void Persistent::start() {
  if (!operation_) throw Error(Errc::invalid_argument, "start() of an empty Persistent");
  operation_->start();
}
bool Persistent::test() { return operation_ ? operation_->test() : true; }
void Persistent::wait() {
  if (operation_) operation_->wait();
}

}  // namespace grove
