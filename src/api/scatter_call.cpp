// Comm::scatter, iscatter and scatter_init: the front end of coll/scatter.cpp.

#include <fmt/format.h>

#include "api/call.hpp"
#include "api/checks.hpp"
#include "coll/scatter.hpp"
#include "coll/shm/collectives.hpp"

namespace grove {
namespace {

std::string describe_scatter(const detail::CallPlan& plan, const sched::Buffers&) {
  return fmt::format("scatter(root {}, {} B per rank, {})", plan.shape.root, plan.shape.count,
                     plan.algorithm);
}

class ScatterCall final : public detail::Call {
 public:
  [[gnu::always_inline]] ScatterCall(const Comm& comm, std::span<const std::byte> send,
                                     std::span<std::byte> recv, int root)
      : Call(comm), send_(send), recv_(recv), root_(root) {
    detail::CommState& s = state();
    detail::check_root(s, "scatter", root);
    const bool at_root = s.rank() == root;
    if (at_root) {
      detail::check_length(s, "scatter", "the send buffer", send.size(),
                           recv.size() * static_cast<size_t>(s.size()));
      detail::check_disjoint(s, "scatter", send, recv);
    }
    shape = {.collective = detail::Collective::scatter, .root = root, .count = recv.size()};
    buffers = detail::user_buffers(at_root ? send : std::span<const std::byte>{}, recv);
    describe = &describe_scatter;
    has_shm = !recv.empty();
    has_shm_single_copy = true;
    shm_slot_bytes = recv.size() * static_cast<size_t>(s.size());  // the root writes every block
    shm_message_bytes = recv.size();
  }
  coll::CallFacts facts() const override { return coll::facts(args({})); }
  sched::Schedule build(const coll::AlgorithmSpec& spec) const override {
    return coll::build_scatter(args(spec));
  }
  bool run_shm(shm::Group& group, shm::Route route) const override {
    return shm::scatter(group, route, send_, recv_, root_);
  }

 private:
  coll::ScatterArgs args(const coll::AlgorithmSpec& spec) const {
    return {state().rank(), state().size(), root_, recv_.size(), spec};
  }
  std::span<const std::byte> send_;
  std::span<std::byte> recv_;
  int root_;
};

}  // namespace

void Comm::scatter(std::span<const std::byte> send, std::span<std::byte> recv, int root) {
  detail::run_blocking(ScatterCall(*this, send, recv, root));
}

Request Comm::iscatter(std::span<const std::byte> send, std::span<std::byte> recv, int root) {
  return detail::start(ScatterCall(*this, send, recv, root));
}

Persistent Comm::scatter_init(std::span<const std::byte> send, std::span<std::byte> recv,
                              int root) {
  return detail::persistent(ScatterCall(*this, send, recv, root));
}

}  // namespace grove
