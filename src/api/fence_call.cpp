// Comm::fence and Comm::ifence: the front end of src/runtime/fence_engine.cpp.

#include "api/fence_call.hpp"

#include <fmt/format.h>

#include "grove/error.hpp"
#include "runtime/fence_engine.hpp"
#include "sched/wait.hpp"

namespace grove {
namespace detail {
namespace {

bool is_world(const CommState& comm) {
  return comm.session != nullptr && comm.transport == comm.session->transport.get();
}

// The communicator's engine under the current parameters. Parameters may
// change between fences (every rank at the same call, as for any collective
// argument): the numbering and the failure view carry over to a new engine.
std::shared_ptr<runtime::FenceEngine> engine_for(CommState& comm) {
  if (!is_world(comm)) {
    throw Error(Errc::invalid_argument,
                fmt::format("rank {}: fence: only the world communicator has a fence so far "
                            "(communicator context {})",
                            comm.rank(), comm.context));
  }
  const runtime::FenceConfig config = runtime::FenceConfig::from_params();
  if (!comm.fence) {
    comm.fence = std::make_shared<runtime::FenceEngine>(*comm.transport, comm.context, config);
  } else if (!(comm.fence->config() == config)) {
    if (comm.fence->in_flight()) {
      throw Error(Errc::invalid_argument,
                  fmt::format("rank {}: fence: its parameters changed ({} -> {}) while a fence "
                              "is in flight; change them between fences",
                              comm.rank(), comm.fence->config().describe(), config.describe()));
    }
    runtime::FenceHandover handover = comm.fence->hand_over();
    comm.fence = std::make_shared<runtime::FenceEngine>(*comm.transport, comm.context, config,
                                                        std::move(handover));
  }
  return comm.fence;
}

std::string what_of(const FenceCall& call) {
  return fmt::format("rank {}: fence #{} ({})", call.comm->rank(), call.generation,
                     call.engine->config().describe());
}

}  // namespace

void progress_fence(CommState& comm) {
  comm.transport->progress();
  if (!comm.fence) return;
  if (comm.session != nullptr) {
    comm.session->poll_failures();
    const FailureView& failures = comm.session->failures;
    comm.fence->adopt_view(failures.departed, failures.version);
  }
  comm.fence->poll();
}

bool FenceCall::step() {
  if (done) return true;
  progress_fence(*comm);
  engine->check_error();
  if (!engine->delivered(generation)) return false;
  runtime::FenceResult result = engine->take_result(generation);
  blobs = std::move(result.blobs);
  departed = std::move(result.departed);
  done = true;
  return true;
}

FenceCall::~FenceCall() {
  if (!done && engine) engine->forget(generation);
}

void FenceCall::wait() {
  if (done) return;
  const int notice_fd = comm->session ? comm->session->bootstrap->notice_fd() : -1;
  sched::wait_until(
      *comm->transport, notice_fd, [this] { return step(); }, what_of(*this),
      [this] { return "still pending: " + engine->describe_pending(); });
}

void finalize_with_fence(Comm& world) {
  CommState& comm = world.state();
  try {
    world.fence({});
    auto engine = comm.fence;
    sched::wait_until(
        *comm.transport, comm.session->bootstrap->notice_fd(),
        [&] {
          progress_fence(comm);
          return engine->quiescent();
        },
        fmt::format("rank {}: finalize: releases still unacknowledged", comm.rank()),
        [&] { return engine->describe_pending(); });
  } catch (const Error& e) {
    fmt::print(stderr, "grove: rank {}: finalize fence failed: {}\n", comm.rank(), e.what());
  }
}

}  // namespace detail

FenceRequest::FenceRequest(std::shared_ptr<detail::FenceCall> call) : call_(std::move(call)) {}

bool FenceRequest::test() {
  if (!call_) return true;
  return call_->step();
}

std::vector<std::vector<std::byte>> FenceRequest::wait() {
  if (!call_) return {};
  call_->wait();
  return call_->blobs;
}

const std::vector<int>& FenceRequest::departed() const {
  static const std::vector<int> none;
  return call_ ? call_->departed : none;
}

FenceRequest Comm::ifence(std::span<const std::byte> mine) {
  auto call = std::make_shared<detail::FenceCall>();
  call->comm = state_ptr();
  call->engine = detail::engine_for(state());
  call->generation = call->engine->start(mine);
  return FenceRequest(std::move(call));
}

std::vector<std::vector<std::byte>> Comm::fence(std::span<const std::byte> mine) {
  return ifence(mine).wait();
}

}  // namespace grove
