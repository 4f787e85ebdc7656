#pragma once
// The engine of grove::Window<T>: a symmetric window of `count` elements of
// one Datatype on every member of a group, in one passive-target epoch from
// creation to close (every rank may access every other at any time, as
// MPI's lock_all). docs/rma.md has the semantics; in short:
// - put and accumulate return once the caller's buffer may be reused; the
//   target sees them after flush(rank) or flush_all().
// - get, fetch_and_op and compare_and_swap return with their result.
// - accumulate, fetch_and_op and compare_and_swap are atomic per element
//   (rma/word_ops.hpp), from any rank, through either access path.
// - A target mapped in this process (same host) is accessed by loads and
//   stores; any other through the transport's put/get/atomics.
// Every access is checked on the caller before anything moves: the rank,
// the element range against the window's size, the reduction against the
// type, and whether the target departed. Errors are grove::Error naming the
// caller, the window, the target, the offset and the length.

#include <memory>
#include <string>
#include <vector>

#include "grove/types.hpp"
#include "rma/exchange.hpp"
#include "rma/group.hpp"

namespace grove::rma {

class WindowCore {
 public:
  // Collective: every member passes the same type and count, or every
  // member gets Errc::mismatch naming one that differs.
  WindowCore(std::shared_ptr<Group> group, Datatype type, size_t count);
  ~WindowCore();
  WindowCore(const WindowCore&) = delete;
  WindowCore& operator=(const WindowCore&) = delete;

  Datatype type() const { return type_; }
  size_t count() const { return count_; }
  int rank() const { return group_->rank(); }
  int size() const { return group_->size(); }
  // This rank's memory (count elements).
  std::byte* local();
  std::string name() const;  // "window(int32 x 16)"

  // `n` elements at element `index` of `target`'s window.
  void put(int target, size_t index, const std::byte* data, size_t n);
  void get(int target, size_t index, std::byte* out, size_t n);
  void accumulate(int target, size_t index, const std::byte* data, size_t n, ReduceOp op);
  void fetch_and_op(int target, size_t index, const std::byte* operand, std::byte* old,
                    ReduceOp op);
  void compare_and_swap(int target, size_t index, const std::byte* compare,
                        const std::byte* desired, std::byte* old);
  void flush(int target);
  void flush_all();
  // Collective: flushes, waits for every member, frees the memory. Later
  // accesses are errors.
  void close();
  bool closed() const { return closed_; }

  // Completions of posted operations (puts, accumulates through the
  // transport); shared with the transport's callbacks.
  struct Inflight;

 private:
  void check_open(const char* call) const;
  void check_access(const char* call, int target, size_t index, size_t n);
  RmaTarget& target_of(int target) { return *regions_.targets[static_cast<size_t>(target)]; }
  void wait(const std::function<bool()>& done, const std::string& what);
  // wait() for one operation to `target` whose completion state is `keep`.
  void await(const std::shared_ptr<void>& keep, const std::function<bool()>& done, int target,
             const std::string& what);
  void wait_local(int target, const char* call);
  void raise_failures(const char* call, int target);

  std::shared_ptr<Group> group_;
  Datatype type_;
  size_t count_;
  size_t element_;
  RegionSet regions_;
  std::shared_ptr<Inflight> inflight_;
  bool closed_ = false;
};

}  // namespace grove::rma
