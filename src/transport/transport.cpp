// Transport's default one-sided calls: a backend without RMA refuses them
// by name, so a caller learns which transport lacks what.

#include "transport/transport.hpp"

#include <fmt/format.h>

namespace grove {
namespace {

[[noreturn]] void no_rma(const Transport& transport, const char* call) {
  throw Error(Errc::transport,
              fmt::format("{}: rank {}: the '{}' transport has no one-sided access (RMA)", call,
                          transport.rank(), transport.name()));
}

}  // namespace

std::unique_ptr<RmaRegion> Transport::rma_allocate(size_t) {
  no_rma(*this, "rma_allocate");
}
std::unique_ptr<RmaTarget> Transport::rma_attach(int, std::span<const std::byte>) {
  no_rma(*this, "rma_attach");
}
void Transport::rma_put(RmaTarget&, size_t, const void*, size_t, CompletionFn, void*) {
  no_rma(*this, "rma_put");
}
void Transport::rma_get(RmaTarget&, size_t, void*, size_t, CompletionFn, void*) {
  no_rma(*this, "rma_get");
}
void Transport::rma_atomic(RmaTarget&, size_t, const RmaAtomic&, CompletionFn, void*) {
  no_rma(*this, "rma_atomic");
}
void Transport::rma_flush(int, CompletionFn, void*) {
  no_rma(*this, "rma_flush");
}
void Transport::rma_fence() {
  no_rma(*this, "rma_fence");
}

}  // namespace grove
