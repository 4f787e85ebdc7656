#pragma once
// What a grove::Ring holds: its rma::RingEndpoint. Tests reach the endpoint
// (its memory, to corrupt a slot) through Ring::state().

#include <memory>

#include "rma/ring_endpoint.hpp"

namespace grove::detail {

class RingState {
 public:
  explicit RingState(std::unique_ptr<rma::RingEndpoint> e) : endpoint(std::move(e)) {}
  std::unique_ptr<rma::RingEndpoint> endpoint;
};

}  // namespace grove::detail
