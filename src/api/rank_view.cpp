#include "api/rank_view.hpp"

#include <fmt/format.h>

namespace grove::detail {

RankView::RankView(Transport& base, std::vector<int> members, int my_index,
                   std::shared_ptr<const void> keep_alive)
    : base_(base),
      members_(std::move(members)),
      rank_(my_index),
      keep_alive_(std::move(keep_alive)) {
  for (size_t i = 0; i < members_.size(); ++i)
    index_of_[members_[i]] = static_cast<int>(i);
}

std::string RankView::name() const {
  return base_.name();
}

int RankView::base_rank(int peer) const {
  if (peer < 0 || peer >= size()) {
    throw Error(Errc::invalid_argument,
                fmt::format("communicator rank {} is outside [0, {})", peer, size()));
  }
  return members_[static_cast<size_t>(peer)];
}

void RankView::send(int peer, Tag tag, const void* data, size_t length, CompletionFn done,
                    void* context) {
  base_.send(base_rank(peer), tag, data, length, done, context);
}

void RankView::recv(int peer, Tag tag, void* data, size_t capacity, CompletionFn done,
                    void* context) {
  base_.recv(base_rank(peer), tag, data, capacity, done, context);
}

void RankView::cancel(int peer, Tag tag, void* context, CancelMode mode) {
  base_.cancel(base_rank(peer), tag, context, mode);
}

std::optional<Transport::Probe> RankView::probe(int peer, Tag tag, Tag mask) {
  auto found = base_.probe(peer < 0 ? -1 : base_rank(peer), tag, mask);
  if (!found) return std::nullopt;
  const auto it = index_of_.find(found->source);
  if (it == index_of_.end()) return std::nullopt;  // not a member: not this communicator's
  found->source = it->second;
  return found;
}

std::unique_ptr<RmaTarget> RankView::rma_attach(int peer, std::span<const std::byte> key) {
  return base_.rma_attach(base_rank(peer), key);
}

void RankView::rma_flush(int peer, CompletionFn done, void* context) {
  base_.rma_flush(peer < 0 ? -1 : base_rank(peer), done, context);
}

void RankView::set_am_handler(uint16_t id, AmHandler) {
  throw Error(Errc::invalid_argument,
              fmt::format("active message {}: handlers are registered on the session's transport, "
                          "not on a sub-communicator",
                          id));
}

void RankView::am_send(int peer, uint16_t id, std::span<const std::byte> payload) {
  base_.am_send(base_rank(peer), id, payload);
}

}  // namespace grove::detail
