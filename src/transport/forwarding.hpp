#pragma once
// ForwardingTransport: a Transport that passes every call to another one.
// Decorators that watch or cut one kind of traffic (the fence's step taps in
// the simulator and in tests) derive from it and override only that call,
// so a method added to Transport is forwarded in one place.

#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "transport/transport.hpp"

namespace grove {

class ForwardingTransport : public Transport {
 public:
  // `inner` must outlive this transport.
  explicit ForwardingTransport(Transport& inner) : inner_(inner) {}

  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  std::string name() const override { return inner_.name(); }
  bool carries_payload() const override { return inner_.carries_payload(); }
  void send(int peer, Tag tag, const void* data, size_t length, CompletionFn done,
            void* context) override {
    inner_.send(peer, tag, data, length, done, context);
  }
  void recv(int peer, Tag tag, void* data, size_t capacity, CompletionFn done,
            void* context) override {
    inner_.recv(peer, tag, data, capacity, done, context);
  }
  void cancel(int peer, Tag tag, void* context, CancelMode mode) override {
    inner_.cancel(peer, tag, context, mode);
  }
  std::optional<Probe> probe(int peer, Tag tag, Tag mask) override {
    return inner_.probe(peer, tag, mask);
  }
  void set_am_handler(uint16_t id, AmHandler handler) override {
    inner_.set_am_handler(id, std::move(handler));
  }
  void am_send(int peer, uint16_t id, std::span<const std::byte> payload) override {
    inner_.am_send(peer, id, payload);
  }
  bool progress() override { return inner_.progress(); }
  void block(int extra_fd, std::chrono::microseconds max) override { inner_.block(extra_fd, max); }
  double now() const override { return inner_.now(); }
  bool supports_rma() const override { return inner_.supports_rma(); }
  std::unique_ptr<RmaRegion> rma_allocate(size_t bytes) override {
    return inner_.rma_allocate(bytes);
  }
  std::unique_ptr<RmaTarget> rma_attach(int peer, std::span<const std::byte> key) override {
    return inner_.rma_attach(peer, key);
  }
  void rma_put(RmaTarget& target, size_t offset, const void* data, size_t length, CompletionFn done,
               void* context) override {
    inner_.rma_put(target, offset, data, length, done, context);
  }
  void rma_get(RmaTarget& target, size_t offset, void* data, size_t length, CompletionFn done,
               void* context) override {
    inner_.rma_get(target, offset, data, length, done, context);
  }
  void rma_atomic(RmaTarget& target, size_t offset, const RmaAtomic& atomic, CompletionFn done,
                  void* context) override {
    inner_.rma_atomic(target, offset, atomic, done, context);
  }
  void rma_fence() override { inner_.rma_fence(); }
  void rma_flush(int peer, CompletionFn done, void* context) override {
    inner_.rma_flush(peer, done, context);
  }

 protected:
  Transport& inner() { return inner_; }

 private:
  Transport& inner_;
};

}  // namespace grove
