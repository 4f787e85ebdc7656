// grove::Ring (include/grove/ring.hpp) over rma::RingEndpoint.

#include <fmt/format.h>

#include "api/ring_state.hpp"
#include "api/rma_group.hpp"
#include "grove/ring.hpp"

namespace grove {
namespace {

rma::RingEndpoint& endpoint_of(const std::shared_ptr<detail::RingState>& state, const char* call) {
  if (!state) {
    throw Error(Errc::invalid_argument,
                fmt::format("ring {}: a default-constructed ring has no lanes", call));
  }
  return *state->endpoint;
}

}  // namespace

Ring::Ring(Comm& comm, std::vector<Lane> lanes, RingMode mode) {
  std::vector<rma::LaneSpec> specs;
  specs.reserve(lanes.size());
  for (const Lane& l : lanes)
    specs.push_back({l.src, l.dst, l.depth, l.capacity});
  state_ = std::make_shared<detail::RingState>(std::make_unique<rma::RingEndpoint>(
      detail::make_rma_group(comm.state_ptr()), std::move(specs),
      mode == RingMode::safe ? rma::RingMode::safe : rma::RingMode::raw));
}

void Ring::send(int dst, std::span<const std::byte> message) {
  endpoint_of(state_, "send").send(dst, message);
}
bool Ring::try_send(int dst, std::span<const std::byte> message) {
  return endpoint_of(state_, "try_send").try_send(dst, message);
}
size_t Ring::recv(int src, std::span<std::byte> out) {
  return endpoint_of(state_, "recv").recv(src, out);
}
std::optional<size_t> Ring::try_recv(int src, std::span<std::byte> out) {
  return endpoint_of(state_, "try_recv").try_recv(src, out);
}
Ring::Received Ring::recv_any(std::span<std::byte> out) {
  const auto got = endpoint_of(state_, "recv_any").recv_any(out);
  return {got.src, got.bytes};
}
std::optional<Ring::Received> Ring::try_recv_any(std::span<std::byte> out) {
  const auto got = endpoint_of(state_, "try_recv_any").try_recv_any(out);
  if (!got) return std::nullopt;
  return Received{got->src, got->bytes};
}

std::vector<LaneStats> Ring::stats() const {
  std::vector<LaneStats> out;
  for (const rma::LaneCounters& c : endpoint_of(state_, "stats").counters()) {
    out.push_back({c.src, c.dst, c.sent, c.chunked, c.by_descriptor, c.single_copy, c.waits,
                   c.wait_seconds, c.delivered, c.lost, c.corrupt, c.max_lag, c.sleeps,
                   c.sleeps_timed_out});
  }
  return out;
}

void Ring::close() {
  if (state_) state_->endpoint->close();
}

}  // namespace grove
