// Comm::alltoallv, ialltoallv and alltoallv_init: the front end of
// coll/alltoallv.cpp.

#include <vector>

#include <fmt/format.h>

#include "api/call.hpp"
#include "api/checks.hpp"
#include "coll/alltoallv.hpp"

namespace grove {
namespace {

std::vector<size_t> copy_of(std::span<const size_t> values) {
  return std::vector<size_t>(values.begin(), values.end());
}

// The send buffer's length is not part of the shape (blocks may leave gaps),
// so it comes from the failing call's buffers.
std::string describe_alltoallv(const detail::CallPlan& plan, const sched::Buffers& buffers) {
  return fmt::format("alltoallv({} B to send, {})", buffers.input_length, plan.algorithm);
}

class AlltoallvCall final : public detail::Call {
 public:
  AlltoallvCall(const Comm& comm, std::span<const std::byte> send, std::span<std::byte> recv,
                const Comm::AlltoallvLayout& layout)
      : Call(comm), layout_(layout) {
    detail::CommState& s = state();
    detail::check_count_list(s, "alltoallv", "send_counts", layout.send_counts.size());
    detail::check_count_list(s, "alltoallv", "recv_counts", layout.recv_counts.size());
    if (!layout.send_offsets.empty())
      detail::check_count_list(s, "alltoallv", "send_offsets", layout.send_offsets.size());
    if (!layout.recv_offsets.empty())
      detail::check_count_list(s, "alltoallv", "recv_offsets", layout.recv_offsets.size());
    detail::check_blocks(s, "alltoallv", "send buffer", layout.send_counts, layout.send_offsets,
                         send.size());
    detail::check_blocks(s, "alltoallv", "receive buffer", layout.recv_counts, layout.recv_offsets,
                         recv.size());
    detail::check_disjoint(s, "alltoallv", send, recv);
    const auto self = static_cast<size_t>(s.rank());
    if (layout.send_counts[self] != layout.recv_counts[self]) {
      throw Error(
          Errc::invalid_argument,
          fmt::format("rank {}: alltoallv: send_counts[{}] = {} but recv_counts[{}] = {} "
                      "(a rank's block to itself)",
                      s.rank(), self, layout.send_counts[self], self, layout.recv_counts[self]));
    }
    shape = {.collective = detail::Collective::alltoallv,
             .lists = {layout.send_counts, layout.send_offsets, layout.recv_counts,
                       layout.recv_offsets}};
    buffers = detail::user_buffers(send, recv);
    describe = &describe_alltoallv;
  }
  coll::CallFacts facts() const override { return coll::facts(args({})); }
  sched::Schedule build(const coll::AlgorithmSpec& spec) const override {
    return coll::build_alltoallv(args(spec));
  }

 private:
  coll::AlltoallvArgs args(const coll::AlgorithmSpec& spec) const {
    return {state().rank(),
            state().size(),
            copy_of(layout_.send_counts),
            copy_of(layout_.send_offsets),
            copy_of(layout_.recv_counts),
            copy_of(layout_.recv_offsets),
            spec,
            0};
  }
  Comm::AlltoallvLayout layout_;
};

}  // namespace

void Comm::alltoallv(std::span<const std::byte> send, std::span<std::byte> recv,
                     const AlltoallvLayout& layout) {
  detail::run_blocking(AlltoallvCall(*this, send, recv, layout));
}

Request Comm::ialltoallv(std::span<const std::byte> send, std::span<std::byte> recv,
                         const AlltoallvLayout& layout) {
  return detail::start(AlltoallvCall(*this, send, recv, layout));
}

Persistent Comm::alltoallv_init(std::span<const std::byte> send, std::span<std::byte> recv,
                                const AlltoallvLayout& layout) {
  return detail::persistent(AlltoallvCall(*this, send, recv, layout));
}

}  // namespace grove
