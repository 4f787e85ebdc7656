#pragma once
// grove::Comm: a group of ranks and the collectives over it. Every collective
// comes blocking (`bcast`), non-blocking (`ibcast`, returning a Request) and
// persistent (`bcast_init`, returning a Persistent). Arguments are validated
// on the calling rank; a grove::Error names the problem.
//
// Byte overloads take std::span<std::byte>; typed overloads take spans of
// any element type with a Datatype (include/grove/types.hpp).

#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "grove/request.hpp"
#include "grove/types.hpp"

namespace grove {

namespace detail {
struct CommState;
}

class Comm {
 public:
  int rank() const;
  int size() const;

  // Broadcast `buffer` from `root` to every rank (same length everywhere).
  void bcast(std::span<std::byte> buffer, int root);
  Request ibcast(std::span<std::byte> buffer, int root);
  Persistent bcast_init(std::span<std::byte> buffer, int root);
  template <class T>
  void bcast(std::span<T> buffer, int root) {
    bcast(std::as_writable_bytes(buffer), root);
  }
  template <class T>
  Request ibcast(std::span<T> buffer, int root) {
    return ibcast(std::as_writable_bytes(buffer), root);
  }

  // No rank returns before every rank has entered.
  void barrier();
  Request ibarrier();
  Persistent barrier_init();

  // Internal: communicators are made by Session and Comm::split/dup.
  explicit Comm(std::shared_ptr<detail::CommState> state);
  detail::CommState& state() const { return *state_; }
  const std::shared_ptr<detail::CommState>& state_ptr() const { return state_; }

 private:
  std::shared_ptr<detail::CommState> state_;
};

}  // namespace grove
