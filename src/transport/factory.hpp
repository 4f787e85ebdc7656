#pragma once
// Making a transport: the bootstrap names the kind its job runs on and lends
// its side channel (a PeerExchange) for the transport to swap addresses.

#include <cstddef>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "transport/transport.hpp"

namespace grove {

// A slow, reliable side channel among the ranks of a job: one blob per rank
// gathered to every rank. Bootstraps implement it.
class PeerExchange {
 public:
  virtual ~PeerExchange() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Every rank contributes one blob and gets all of them, indexed by rank.
  // Blocking, bounded by timeout_ms; throws grove::Error naming the cause.
  virtual std::vector<std::vector<std::byte>> allgather(std::span<const std::byte> mine) = 0;
};

// A connected transport of `kind` ("ucx") over `exchange`'s ranks.
// Collective: every rank must call it. Throws grove::Error(invalid_argument)
// for an unknown kind, and the backend's errors naming the failing step.
std::unique_ptr<Transport> make_transport(std::string_view kind, PeerExchange& exchange);

}  // namespace grove
