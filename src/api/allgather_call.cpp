// Comm::allgather, iallgather and allgather_init (and their in-place forms):
// the front end of coll/allgather.cpp.

#include <fmt/format.h>

#include "api/call.hpp"
#include "api/checks.hpp"
#include "api/hierarchy.hpp"
#include "coll/allgather.hpp"
#include "coll/shm/collectives.hpp"

namespace grove {
namespace {

std::string describe_allgather(const detail::CallPlan& plan, const sched::Buffers&) {
  return fmt::format("allgather({} B per rank{}, {})", plan.shape.count,
                     plan.shape.in_place ? ", in place" : "", plan.algorithm);
}

// `send` empty and in place: the own block is already in `recv`.
class AllgatherCall final : public detail::Call {
 public:
  [[gnu::always_inline]] AllgatherCall(const Comm& comm, std::span<const std::byte> send,
                                       std::span<std::byte> recv, bool in_place)
      : Call(comm), send_(send), recv_(recv), in_place_(in_place) {
    detail::CommState& s = state();
    const auto n = static_cast<size_t>(s.size());
    if (in_place) {
      detail::check_multiple(s, "allgather", "the in-place buffer", recv.size(), n,
                             "blocks of every rank");
      block_ = recv.size() / n;
    } else {
      detail::check_length(s, "allgather", "the receive buffer", recv.size(), send.size() * n);
      detail::check_disjoint(s, "allgather", send, recv);
      block_ = send.size();
    }
    shape = {.collective = detail::Collective::allgather, .in_place = in_place, .count = block_};
    buffers = detail::user_buffers(in_place ? std::span<const std::byte>{} : send, recv);
    describe = &describe_allgather;
    has_shm = block_ > 0;
    has_shm_single_copy = true;
    has_hier = block_ > 0;
    shm_slot_bytes = shm_message_bytes = block_;
  }
  coll::CallFacts facts() const override { return coll::facts(args({})); }
  sched::Schedule build(const coll::AlgorithmSpec& spec) const override {
    return coll::build_allgather(args(spec));
  }
  std::string algorithm_text(const coll::AlgorithmSpec& spec) const override {
    return coll::describe_allgather(spec);
  }
  bool run_shm(shm::Group& group, shm::Route route) const override {
    return shm::allgather(group, route, in_place_ ? std::span<const std::byte>{} : send_, recv_);
  }
  bool run_hier(detail::Hierarchy& h) const override {
    return detail::hier_allgather(h, in_place_ ? std::span<const std::byte>{} : send_, recv_);
  }

 private:
  coll::AllgatherArgs args(const coll::AlgorithmSpec& spec) const {
    return {state().rank(), state().size(), block_, in_place_, spec};
  }
  std::span<const std::byte> send_;
  std::span<std::byte> recv_;
  bool in_place_;
  size_t block_ = 0;
};

}  // namespace

void Comm::allgather(std::span<const std::byte> send, std::span<std::byte> recv) {
  detail::run_blocking(AllgatherCall(*this, send, recv, false));
}

Request Comm::iallgather(std::span<const std::byte> send, std::span<std::byte> recv) {
  return detail::start(AllgatherCall(*this, send, recv, false));
}

Persistent Comm::allgather_init(std::span<const std::byte> send, std::span<std::byte> recv) {
  return detail::persistent(AllgatherCall(*this, send, recv, false));
}

void Comm::allgather(std::span<std::byte> buffer) {
  detail::run_blocking(AllgatherCall(*this, {}, buffer, true));
}

Request Comm::iallgather(std::span<std::byte> buffer) {
  return detail::start(AllgatherCall(*this, {}, buffer, true));
}

Persistent Comm::allgather_init(std::span<std::byte> buffer) {
  return detail::persistent(AllgatherCall(*this, {}, buffer, true));
}

}  // namespace grove
