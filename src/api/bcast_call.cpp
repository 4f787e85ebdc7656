// Comm::bcast, ibcast and bcast_init: the front end of coll/bcast.cpp.

#include <fmt/format.h>

#include "api/call.hpp"
#include "api/checks.hpp"
#include "api/hierarchy.hpp"
#include "coll/bcast.hpp"
#include "coll/shm/collectives.hpp"

namespace grove {
namespace {

std::string describe_bcast(const detail::CallPlan& plan, const sched::Buffers&) {
  return fmt::format("bcast(root {}, {} B, {})", plan.shape.root, plan.shape.count, plan.algorithm);
}

class BcastCall final : public detail::Call {
 public:
  [[gnu::always_inline]] BcastCall(const Comm& comm, std::span<std::byte> buffer, int root)
      : Call(comm), buffer_(buffer), root_(root) {
    detail::check_root(state(), "bcast", root);
    shape = {.collective = detail::Collective::bcast, .root = root, .count = buffer.size()};
    buffers = detail::user_buffers({}, buffer);
    describe = &describe_bcast;
    has_shm = !buffer.empty();
    has_shm_single_copy = true;
    has_hier = !buffer.empty();
    shm_slot_bytes = shm_message_bytes = buffer.size();
  }
  coll::CallFacts facts() const override { return coll::facts(args({})); }
  sched::Schedule build(const coll::AlgorithmSpec& spec) const override {
    return coll::build_bcast(args(spec));
  }
  bool run_shm(shm::Group& group, shm::Route route) const override {
    return shm::bcast(group, route, buffer_, root_);
  }
  bool run_hier(detail::Hierarchy& h) const override {
    return detail::hier_bcast(h, buffer_, root_);
  }

 private:
  coll::BcastArgs args(const coll::AlgorithmSpec& spec) const {
    return {state().rank(), state().size(), root_, buffer_.size(), spec};
  }
  std::span<std::byte> buffer_;
  int root_;
};

}  // namespace

void Comm::bcast(std::span<std::byte> buffer, int root) {
  detail::run_blocking(BcastCall(*this, buffer, root));
}

Request Comm::ibcast(std::span<std::byte> buffer, int root) {
  return detail::start(BcastCall(*this, buffer, root));
}

Persistent Comm::bcast_init(std::span<std::byte> buffer, int root) {
  return detail::persistent(BcastCall(*this, buffer, root));
}

}  // namespace grove
