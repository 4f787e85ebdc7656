#include "api/rma_group.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "api/exchange.hpp"
#include "api/rank_view.hpp"
#include "grove/comm.hpp"

namespace grove::detail {
namespace {

class CommGroup final : public rma::Group {
 public:
  explicit CommGroup(std::shared_ptr<CommState> comm) : comm_(std::move(comm)) {
    // Each member's rank in the session, through the chain of rank views of
    // nested sub-communicators.
    for (int m = 0; m < comm_->size(); ++m) {
      int rank = m;
      Transport* t = comm_->transport;
      while (auto* view = dynamic_cast<RankView*>(t)) {
        rank = view->base_rank(rank);
        t = &view->base();
      }
      world_ranks_.push_back(rank);
    }
  }

  int rank() const override { return comm_->rank(); }
  int size() const override { return comm_->size(); }
  Transport& transport() override { return *comm_->transport; }
  int notice_fd() const override { return comm_->session->bootstrap->notice_fd(); }

  bool departed(int member) override {
    SessionState& session = *comm_->session;
    session.poll_failures();
    return session.failures.departed.count(world_ranks_[static_cast<size_t>(member)]) != 0;
  }

  std::vector<std::vector<std::byte>> allgather(std::span<const std::byte> mine,
                                                std::string_view what) override {
    const std::string name(what);
    const auto lengths = exchange_records<uint64_t>(comm_, mine.size(), name + " (lengths)");
    std::vector<size_t> counts(lengths.begin(), lengths.end());
    size_t total = 0;
    for (size_t c : counts)
      total += c;
    std::vector<std::byte> all(total);
    Comm comm(comm_);
    comm.allgatherv(mine, all, counts);
    std::vector<std::vector<std::byte>> out;
    size_t at = 0;
    for (size_t c : counts) {
      out.emplace_back(all.begin() + static_cast<ptrdiff_t>(at),
                       all.begin() + static_cast<ptrdiff_t>(at + c));
      at += c;
    }
    return out;
  }

  void barrier(std::string_view) override { Comm(comm_).barrier(); }

  void register_wakeup(uint16_t id) override {
    SessionState& session = *comm_->session;
    auto& ids = session.wakeup_ids;
    if (std::find(ids.begin(), ids.end(), id) != ids.end()) return;
    session.transport->set_am_handler(id, [](int, std::span<const std::byte>) {});
    ids.push_back(id);
  }

 private:
  std::shared_ptr<CommState> comm_;
  std::vector<int> world_ranks_;
};

}  // namespace

std::shared_ptr<rma::Group> make_rma_group(const std::shared_ptr<CommState>& comm) {
  return std::make_shared<CommGroup>(comm);
}

}  // namespace grove::detail
