#pragma once
// grove::Window<T>: one-sided access (RMA) to memory every rank of a
// communicator allocates for it. Created collectively over a Comm with one
// element type and count on every rank; every rank may then read, write and
// update any rank's window at any time until close() (one passive-target
// epoch, as MPI's MPI_Win_lock_all over the window's lifetime).
//
//   grove::Window<int64_t> w(world, 16);              // 16 elements per rank
//   w.put(1, 0, values);                             // rank 1, elements [0, n)
//   w.flush(1);                                      // rank 1 sees them now
//   int64_t old = w.fetch_and_op(0, 3, 1, grove::ReduceOp::sum);
//
// Semantics (docs/rma.md):
// - put and accumulate return once `values` may be reused; the target sees
//   them after flush(rank) or flush_all().
// - get, fetch_and_op and compare_and_swap return with their result. A get
//   does not wait for this rank's unflushed puts to the same target.
// - accumulate, fetch_and_op and compare_and_swap are atomic per element
//   against one another, from every rank (UCX atomics where the transport
//   has them, compare-and-swap loops otherwise); put and get are not.
// - local() is this rank's memory; others' updates show there once they
//   flushed and told this rank so (a barrier, a message).
// - Every access is checked on the calling rank before anything moves: the
//   target rank, the element range (grove::Error naming rank, offset and
//   length), the reduction against T, a departed target. A window whose
//   ranks disagree on T or the count is refused on every rank
//   (Errc::mismatch), as is one over a communicator with a departed rank.
// - close() is collective (flush, then a barrier, then the memory is
//   freed); a window destroyed without close() frees its memory without
//   waiting for anyone. Windows must go before their Session.

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <type_traits>

#include "grove/comm.hpp"
#include "grove/types.hpp"

namespace grove {

namespace detail {
class WindowState;
}

// The untyped engine of Window<T> (elements of one Datatype).
class RawWindow {
 public:
  RawWindow() = default;
  RawWindow(Comm& comm, Datatype type, size_t count);
  size_t size() const;  // elements per rank
  Datatype type() const;
  std::byte* local();
  void put(int rank, size_t index, const std::byte* values, size_t count);
  void get(int rank, size_t index, std::byte* out, size_t count);
  void accumulate(int rank, size_t index, const std::byte* values, size_t count, ReduceOp op);
  void fetch_and_op(int rank, size_t index, const std::byte* operand, std::byte* old, ReduceOp op);
  void compare_and_swap(int rank, size_t index, const std::byte* expected, const std::byte* desired,
                        std::byte* old);
  void flush(int rank);
  void flush_all();
  void close();
  std::string name() const;

 private:
  std::shared_ptr<detail::WindowState> state_;
};

template <class T>
class Window {
 public:
  Window() = default;
  // Collective over `comm`: `count` elements of T on every rank, zeroed.
  Window(Comm& comm, size_t count) : raw_(comm, datatype_of<T>(), count) {}

  size_t size() const { return raw_.size(); }
  std::span<T> local() { return {reinterpret_cast<T*>(raw_.local()), raw_.size()}; }

  // values -> rank's elements [index, index + values.size()).
  void put(int rank, size_t index, std::span<const std::type_identity_t<T>> values) {
    raw_.put(rank, index, reinterpret_cast<const std::byte*>(values.data()), values.size());
  }
  // rank's elements [index, index + out.size()) -> out.
  void get(int rank, size_t index, std::span<T> out) {
    raw_.get(rank, index, reinterpret_cast<std::byte*>(out.data()), out.size());
  }
  // rank's element[index + i] = element op values[i], atomically per element.
  void accumulate(int rank, size_t index, std::span<const std::type_identity_t<T>> values,
                  ReduceOp op) {
    raw_.accumulate(rank, index, reinterpret_cast<const std::byte*>(values.data()), values.size(),
                    op);
  }
  // Atomically: old = element; element = old op operand; returns old.
  T fetch_and_op(int rank, size_t index, T operand, ReduceOp op) {
    T old{};
    raw_.fetch_and_op(rank, index, reinterpret_cast<const std::byte*>(&operand),
                      reinterpret_cast<std::byte*>(&old), op);
    return old;
  }
  // Atomically: old = element; if old == expected (bitwise) element =
  // desired; returns old.
  T compare_and_swap(int rank, size_t index, T expected, T desired) {
    T old{};
    raw_.compare_and_swap(rank, index, reinterpret_cast<const std::byte*>(&expected),
                          reinterpret_cast<const std::byte*>(&desired),
                          reinterpret_cast<std::byte*>(&old));
    return old;
  }
  void flush(int rank) { raw_.flush(rank); }
  void flush_all() { raw_.flush_all(); }
  void close() { raw_.close(); }
  RawWindow& raw() { return raw_; }

 private:
  RawWindow raw_;
};

}  // namespace grove
