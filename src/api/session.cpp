#include "grove/session.hpp"

#include <poll.h>

#include <fmt/format.h>

#include "api/comm_state.hpp"
#include "api/exchange.hpp"
#include "api/fence_call.hpp"
#include "api/hierarchy.hpp"
#include "coll/select.hpp"
#include "core/params.hpp"
#include "sched/wait.hpp"
#include "transport/factory.hpp"

namespace grove {

namespace detail {

void SessionState::read_notices(double now) {
  last_failure_poll = now;
  const int fd = bootstrap->notice_fd();
  if (fd < 0) return;
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, 0) <= 0) return;
  for (const FailureNotice& notice : bootstrap->poll_notices()) {
    if (failures.apply(notice)) departure_order.push_back(notice.rank);
  }
}

}  // namespace detail

Session::Session() : state_(std::make_unique<detail::SessionState>()) {
  params::load_process_params();
  coll::tuning_table();  // a bad tuning_file is refused here, naming file and line
  state_->bootstrap = bootstrap_from_environment();
  state_->transport = make_transport(state_->bootstrap->transport_kind(), *state_->bootstrap);
  state_->bootstrap->started();
  sched::set_host_load(static_cast<int>(state_->bootstrap->local_peers().size()),
                       state_->bootstrap->job_cores());
  auto world = std::make_shared<detail::CommState>();
  world->session = state_.get();
  world->set_transport(state_->transport.get());
  world->context = 0;
  world_ = std::make_unique<Comm>(std::move(world));
  detail::place_ranks(*world_, state_->bootstrap->hosts().of_rank);
}

Session::~Session() {
  // Nobody disconnects while a peer may still send to it. A job that used
  // the fence ends with one (it tolerates departed ranks, and every rank
  // waits until it owes no peer a release replay); others with a barrier.
  // Every rank takes the same branch: the fence is collective.
  if (world_->state().fence) {
    detail::finalize_with_fence(*world_);
  } else {
    try {
      world_->barrier();
    } catch (const Error& e) {
      fmt::print(stderr, "grove: rank {}: finalize barrier failed: {}\n", rank(), e.what());
    }
  }
  world_.reset();
  state_->transport.reset();
}

int Session::rank() const {
  return state_->bootstrap->rank();
}
int Session::size() const {
  return state_->bootstrap->size();
}
Comm& Session::world() {
  return *world_;
}
std::set<int> Session::departed() const {
  state_->poll_failures();
  return state_->failures.departed;
}
uint64_t Session::failure_version() const {
  state_->poll_failures();
  return state_->failures.version;
}

}  // namespace grove
