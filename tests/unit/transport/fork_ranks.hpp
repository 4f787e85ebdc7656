#pragma once
// Test-only multi-process harness for transport tests, independent of the
// launcher: run_ranks() forks K children, each connected to the parent by a
// socketpair; the parent relays allgathers (ForkBootstrap) and collects exit
// statuses, killing every child when the time bound passes.
//
// A child runs the body with its own Bootstrap, then exits 0 when no
// GoogleTest assertion failed in it, 1 otherwise, 2 on an exception. Its
// assertion messages are printed by the child itself.

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "bootstrap/backends.hpp"
#include "bootstrap/bootstrap.hpp"
#include "transport/transport.hpp"

namespace grove::testing {

class ForkBootstrap final : public Bootstrap {
 public:
  ForkBootstrap(int rank, int size, int fd)
      : rank_(rank), size_(size), fd_(fd), hosts_(one_host(size)) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override { return "fork-test"; }
  const Hosts& hosts() const override { return hosts_; }
  // Frames: [uint64 length][bytes]. Bounded by 60 s; throws grove::Error.
  std::vector<Blob> allgather(std::span<const std::byte> mine) override;
  void barrier() override { allgather({}); }
  int notice_fd() const override { return -1; }
  std::vector<FailureNotice> poll_notices() override { return {}; }

 private:
  int rank_;
  int size_;
  int fd_;
  Hosts hosts_;
};

// How one child ended: exited with `code`, or killed by `signal`.
struct ChildEnd {
  int code = -1;
  int signal = 0;
  bool timed_out = false;
  std::string describe() const;
};

// Forks `ranks` children running body(bootstrap) and relays their
// allgathers until all have ended or `limit` passes (then kills them all).
std::vector<ChildEnd> run_ranks(int ranks, const std::function<void(ForkBootstrap&)>& body,
                                std::chrono::seconds limit = std::chrono::seconds(90));

// A GoogleTest failure for every child that did not exit 0 by itself.
void expect_all_exited_zero(const std::vector<ChildEnd>& ends);

// Progresses `transport` until pred() holds, sleeping in block() between
// fruitless progress calls. Returns false when `limit` passes first.
bool wait_for(Transport& transport, const std::function<bool()>& pred,
              std::chrono::milliseconds limit = std::chrono::milliseconds(30000));

// A barrier over the transport itself (zero-byte messages with every rank),
// progressing while it waits. Use it instead of the bootstrap's barrier after
// active messages or unfinished sends: a rank parked in the bootstrap does
// not progress, and a rendezvous it started needs its progress to finish.
void transport_barrier(Transport& transport);

// Same, but every sleep in block() lasts until `limit` unless the transport
// wakes it: a wake-up that never comes fails the wait instead of being
// papered over by a short sleep.
bool wait_blocking(Transport& transport, const std::function<bool()>& pred,
                   std::chrono::milliseconds limit = std::chrono::milliseconds(30000));

// Records one completion.
struct Completed {
  int count = 0;
  Status status;
  static void fn(void* context, const Status& status) {
    auto* self = static_cast<Completed*>(context);
    ++self->count;
    self->status = status;
  }
};

// A byte pattern that differs per (source, destination, case) and position.
std::byte pattern_byte(int source, int destination, int which, size_t index);
std::vector<std::byte> pattern(int source, int destination, int which, size_t length);

}  // namespace grove::testing
