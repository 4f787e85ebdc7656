#pragma once
// What a Request holds: an operation in flight (a collective's Operation, a
// point-to-point message).

#include <optional>

#include "grove/request.hpp"

namespace grove::detail {

class Pending {
 public:
  virtual ~Pending() = default;
  // Advances communication once; true when complete. Throws on failure.
  virtual bool test() = 0;
  // Blocks under the wait policy until complete; throws on failure/timeout.
  virtual void wait() = 0;
  // A completed receive's message; nothing for other operations.
  virtual std::optional<MessageInfo> message() const { return std::nullopt; }
};

}  // namespace grove::detail
