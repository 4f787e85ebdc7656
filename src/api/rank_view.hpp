#pragma once
// RankView: the Transport of a sub-communicator. It renumbers ranks (rank i
// of the view is rank members[i] of the transport beneath) and forwards
// everything else; the context id in every tag keeps the view's messages
// apart from any other communicator's on the same transport.

#include <memory>
#include <unordered_map>
#include <vector>

#include "transport/transport.hpp"

namespace grove::detail {

class RankView final : public Transport {
 public:
  // `base` must outlive the view; `keep_alive` (the owner of `base`, e.g.
  // the parent communicator) is held to guarantee it.
  RankView(Transport& base, std::vector<int> members, int my_index,
           std::shared_ptr<const void> keep_alive);

  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(members_.size()); }
  std::string name() const override;

  void send(int peer, Tag tag, const void* data, size_t length, CompletionFn done,
            void* context) override;
  void recv(int peer, Tag tag, void* data, size_t capacity, CompletionFn done,
            void* context) override;
  void cancel(int peer, Tag tag, void* context, CancelMode mode) override;
  std::optional<Probe> probe(int peer, Tag tag, Tag mask) override;
  // Active-message ids belong to the session's transport: a view cannot
  // register handlers (grove::Error); am_send renumbers and forwards.
  void set_am_handler(uint16_t id, AmHandler handler) override;
  void am_send(int peer, uint16_t id, std::span<const std::byte> payload) override;
  bool progress() override { return base_.progress(); }
  void block(int extra_fd, std::chrono::microseconds max) override { base_.block(extra_fd, max); }
  double now() const override { return base_.now(); }
  // One-sided access: regions and targets belong to the base transport;
  // attach and flush renumber the peer.
  bool supports_rma() const override { return base_.supports_rma(); }
  std::unique_ptr<RmaRegion> rma_allocate(size_t bytes) override {
    return base_.rma_allocate(bytes);
  }
  std::unique_ptr<RmaTarget> rma_attach(int peer, std::span<const std::byte> key) override;
  void rma_put(RmaTarget& target, size_t offset, const void* data, size_t length, CompletionFn done,
               void* context) override {
    base_.rma_put(target, offset, data, length, done, context);
  }
  void rma_get(RmaTarget& target, size_t offset, void* data, size_t length, CompletionFn done,
               void* context) override {
    base_.rma_get(target, offset, data, length, done, context);
  }
  void rma_atomic(RmaTarget& target, size_t offset, const RmaAtomic& atomic, CompletionFn done,
                  void* context) override {
    base_.rma_atomic(target, offset, atomic, done, context);
  }
  void rma_fence() override { base_.rma_fence(); }
  void rma_flush(int peer, CompletionFn done, void* context) override;

  // Rank `peer` of the view in the transport beneath; the transport beneath.
  int base_rank(int peer) const;
  Transport& base() const { return base_; }

 private:
  Transport& base_;
  std::vector<int> members_;
  std::unordered_map<int, int> index_of_;  // base rank -> view rank
  int rank_;
  std::shared_ptr<const void> keep_alive_;
};

}  // namespace grove::detail
