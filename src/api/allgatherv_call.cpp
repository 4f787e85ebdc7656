// Comm::allgatherv, iallgatherv and allgatherv_init: the front end of
// coll/allgatherv.cpp.

#include <numeric>
#include <vector>

#include <fmt/format.h>

#include "api/call.hpp"
#include "api/checks.hpp"
#include "coll/allgatherv.hpp"

namespace grove {
namespace {

std::string describe_allgatherv(const detail::CallPlan& plan, const sched::Buffers&) {
  return fmt::format("allgatherv({} B in all, {})", plan.shape.count, plan.algorithm);
}

class AllgathervCall final : public detail::Call {
 public:
  AllgathervCall(const Comm& comm, std::span<const std::byte> send, std::span<std::byte> recv,
                 std::span<const size_t> counts, std::span<const size_t> offsets)
      : Call(comm), counts_(counts), offsets_(offsets) {
    detail::CommState& s = state();
    detail::check_count_list(s, "allgatherv", "counts", counts.size());
    if (!offsets.empty()) detail::check_count_list(s, "allgatherv", "offsets", offsets.size());
    detail::check_length(s, "allgatherv", "the send buffer", send.size(),
                         counts[static_cast<size_t>(s.rank())]);
    detail::check_blocks(s, "allgatherv", "receive buffer", counts, offsets, recv.size());
    detail::check_disjoint(s, "allgatherv", send, recv);
    const size_t total = std::accumulate(counts.begin(), counts.end(), size_t{0});
    shape = {
        .collective = detail::Collective::allgatherv, .count = total, .lists = {counts, offsets}};
    buffers = detail::user_buffers(send, recv);
    describe = &describe_allgatherv;
  }
  coll::CallFacts facts() const override { return coll::facts(args({})); }
  sched::Schedule build(const coll::AlgorithmSpec& spec) const override {
    return coll::build_allgatherv(args(spec));
  }
  std::string algorithm_text(const coll::AlgorithmSpec& spec) const override {
    return coll::describe_allgatherv(spec);
  }

 private:
  coll::AllgathervArgs args(const coll::AlgorithmSpec& spec) const {
    return {state().rank(),
            state().size(),
            std::vector<size_t>(counts_.begin(), counts_.end()),
            std::vector<size_t>(offsets_.begin(), offsets_.end()),
            false,
            spec};
  }
  std::span<const size_t> counts_;
  std::span<const size_t> offsets_;
};

}  // namespace

void Comm::allgatherv(std::span<const std::byte> send, std::span<std::byte> recv,
                      std::span<const size_t> counts, std::span<const size_t> offsets) {
  detail::run_blocking(AllgathervCall(*this, send, recv, counts, offsets));
}

Request Comm::iallgatherv(std::span<const std::byte> send, std::span<std::byte> recv,
                          std::span<const size_t> counts, std::span<const size_t> offsets) {
  return detail::start(AllgathervCall(*this, send, recv, counts, offsets));
}

Persistent Comm::allgatherv_init(std::span<const std::byte> send, std::span<std::byte> recv,
                                 std::span<const size_t> counts, std::span<const size_t> offsets) {
  return detail::persistent(AllgathervCall(*this, send, recv, counts, offsets));
}

}  // namespace grove
