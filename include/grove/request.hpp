#pragma once
// Handles to collectives in flight.

#include <memory>

namespace grove {

namespace detail {
class Operation;
}

// A started non-blocking collective. test() advances communication and
// reports completion; wait() blocks under the `wait_policy` parameter, bounded
// by `timeout_ms`. Both throw grove::Error if the operation failed (a peer
// departed, peers disagree on the algorithm, a timeout). A default-constructed
// Request is already complete. Destroying the last handle to an operation
// that has not completed cancels it: nothing is written into its buffers
// after the handle is gone. A Request must not outlive its Session.
class Request {
 public:
  Request() = default;
  explicit Request(std::shared_ptr<detail::Operation> operation);
  bool test();
  void wait();

 private:
  std::shared_ptr<detail::Operation> operation_;
};

// A collective bound once to its arguments and buffers, then started any
// number of times (MPI's persistent collectives). Each start() is one
// collective call: all ranks must start their persistent operations in the
// same order as their other collectives on that communicator.
class Persistent {
 public:
  Persistent() = default;
  explicit Persistent(std::shared_ptr<detail::Operation> operation);
  void start();  // the previous start must have completed
  bool test();
  void wait();

 private:
  std::shared_ptr<detail::Operation> operation_;
};

}  // namespace grove
