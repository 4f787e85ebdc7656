// Comm::gather, igather and gather_init: the front end of coll/gather.cpp.

#include <fmt/format.h>

#include "api/call.hpp"
#include "api/checks.hpp"
#include "coll/gather.hpp"
#include "coll/shm/collectives.hpp"

namespace grove {
namespace {

std::string describe_gather(const detail::CallPlan& plan, const sched::Buffers&) {
  return fmt::format("gather(root {}, {} B per rank, {})", plan.shape.root, plan.shape.count,
                     plan.algorithm);
}

class GatherCall final : public detail::Call {
 public:
  [[gnu::always_inline]] GatherCall(const Comm& comm, std::span<const std::byte> send,
                                    std::span<std::byte> recv, int root)
      : Call(comm), send_(send), recv_(recv), root_(root) {
    detail::CommState& s = state();
    detail::check_root(s, "gather", root);
    const bool at_root = s.rank() == root;
    if (at_root) {
      detail::check_length(s, "gather", "the receive buffer", recv.size(),
                           send.size() * static_cast<size_t>(s.size()));
      detail::check_disjoint(s, "gather", send, recv);
    }
    shape = {.collective = detail::Collective::gather, .root = root, .count = send.size()};
    buffers = detail::user_buffers(send, at_root ? recv : std::span<std::byte>{});
    describe = &describe_gather;
    has_shm = !send.empty();
    has_shm_single_copy = true;
    shm_slot_bytes = shm_message_bytes = send.size();
  }
  coll::CallFacts facts() const override { return coll::facts(args({})); }
  sched::Schedule build(const coll::AlgorithmSpec& spec) const override {
    return coll::build_gather(args(spec));
  }
  bool run_shm(shm::Group& group, shm::Route route) const override {
    return shm::gather(group, route, send_, recv_, root_);
  }

 private:
  coll::GatherArgs args(const coll::AlgorithmSpec& spec) const {
    return {state().rank(), state().size(), root_, send_.size(), spec};
  }
  std::span<const std::byte> send_;
  std::span<std::byte> recv_;
  int root_;
};

}  // namespace

void Comm::gather(std::span<const std::byte> send, std::span<std::byte> recv, int root) {
  detail::run_blocking(GatherCall(*this, send, recv, root));
}

Request Comm::igather(std::span<const std::byte> send, std::span<std::byte> recv, int root) {
  return detail::start(GatherCall(*this, send, recv, root));
}

Persistent Comm::gather_init(std::span<const std::byte> send, std::span<std::byte> recv, int root) {
  return detail::persistent(GatherCall(*this, send, recv, root));
}

}  // namespace grove
