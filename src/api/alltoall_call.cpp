// Comm::alltoall, ialltoall and alltoall_init (and their in-place forms):
// the front end of coll/alltoall.cpp.

#include <fmt/format.h>

#include "api/call.hpp"
#include "api/checks.hpp"
#include "coll/alltoall.hpp"
#include "coll/shm/collectives.hpp"

namespace grove {
namespace {

std::string describe_alltoall(const detail::CallPlan& plan, const sched::Buffers&) {
  return fmt::format("alltoall({} B per block{}, {})", plan.shape.count,
                     plan.shape.in_place ? ", in place" : "", plan.algorithm);
}

class AlltoallCall final : public detail::Call {
 public:
  [[gnu::always_inline]] AlltoallCall(const Comm& comm, std::span<const std::byte> send,
                                      std::span<std::byte> recv, bool in_place)
      : Call(comm), send_(send), recv_(recv), in_place_(in_place) {
    detail::CommState& s = state();
    const auto n = static_cast<size_t>(s.size());
    if (!in_place) {
      detail::check_length(s, "alltoall", "the receive buffer", recv.size(), send.size());
      detail::check_disjoint(s, "alltoall", send, recv);
    }
    detail::check_multiple(s, "alltoall", in_place ? "the in-place buffer" : "the send buffer",
                           recv.size(), n, "blocks of every rank");
    block_ = recv.size() / n;
    shape = {.collective = detail::Collective::alltoall, .in_place = in_place, .count = block_};
    buffers = detail::user_buffers(in_place ? std::span<const std::byte>{} : send, recv);
    describe = &describe_alltoall;
    has_shm = block_ > 0;
    has_shm_single_copy = true;
    shm_slot_bytes = recv.size();  // every block a rank sends
    shm_message_bytes = block_;
  }
  coll::CallFacts facts() const override { return coll::facts(args({})); }
  sched::Schedule build(const coll::AlgorithmSpec& spec) const override {
    return coll::build_alltoall(args(spec));
  }
  bool run_shm(shm::Group& group, shm::Route route) const override {
    return shm::alltoall(group, route, in_place_ ? std::span<const std::byte>{} : send_, recv_);
  }

 private:
  coll::AlltoallArgs args(const coll::AlgorithmSpec& spec) const {
    return {state().rank(), state().size(), block_, in_place_, spec};
  }
  std::span<const std::byte> send_;
  std::span<std::byte> recv_;
  bool in_place_;
  size_t block_ = 0;
};

}  // namespace

void Comm::alltoall(std::span<const std::byte> send, std::span<std::byte> recv) {
  detail::run_blocking(AlltoallCall(*this, send, recv, false));
}

Request Comm::ialltoall(std::span<const std::byte> send, std::span<std::byte> recv) {
  return detail::start(AlltoallCall(*this, send, recv, false));
}

Persistent Comm::alltoall_init(std::span<const std::byte> send, std::span<std::byte> recv) {
  return detail::persistent(AlltoallCall(*this, send, recv, false));
}

void Comm::alltoall(std::span<std::byte> buffer) {
  detail::run_blocking(AlltoallCall(*this, {}, buffer, true));
}

Request Comm::ialltoall(std::span<std::byte> buffer) {
  return detail::start(AlltoallCall(*this, {}, buffer, true));
}

Persistent Comm::alltoall_init(std::span<std::byte> buffer) {
  return detail::persistent(AlltoallCall(*this, {}, buffer, true));
}

}  // namespace grove
