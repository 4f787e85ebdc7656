#pragma once
// A collective call in flight: one schedule executed on one rank, with the
// buffers of the call. Comm's front ends create these; Request and
// Persistent hold them.

#include <memory>
#include <string>

#include "coll/comm_state.hpp"
#include "sched/executor.hpp"

namespace grove::detail {

class Operation {
 public:
  // `what` names the call in errors ("bcast(root=0, 4096 B, binomial)");
  // `stamp` identifies (collective, algorithm, parameters) on the wire.
  Operation(std::shared_ptr<CommState> comm, std::string what,
            std::shared_ptr<const sched::Schedule> schedule, sched::Buffers buffers, uint8_t stamp);
  ~Operation();

  // Takes the communicator's next sequence number and posts the first steps.
  void start();
  // Advances communication once; true when complete. Throws on failure.
  bool test();
  // Blocks under the wait policy until complete; throws on failure/timeout.
  void wait();
  bool active() const { return execution_ != nullptr && !completed_; }

 private:
  void finish();  // throws the execution's error, if any
  void check_for_mismatch();

  std::shared_ptr<CommState> comm_;
  std::string what_;
  std::shared_ptr<const sched::Schedule> schedule_;
  sched::Buffers buffers_;
  uint8_t stamp_;
  Tag base_tag_ = 0;
  std::unique_ptr<sched::Execution> execution_;
  bool completed_ = false;
  double last_mismatch_check_ = 0;
};

// Starts a one-shot operation and wraps it.
std::shared_ptr<Operation> start_operation(std::shared_ptr<CommState> comm, std::string what,
                                           std::shared_ptr<const sched::Schedule> schedule,
                                           sched::Buffers buffers, uint8_t stamp);

}  // namespace grove::detail
