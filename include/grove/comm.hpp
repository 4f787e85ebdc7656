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
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "grove/request.hpp"
#include "grove/types.hpp"

namespace grove {

namespace detail {
struct CommState;
struct FenceCall;
}  // namespace detail

// A fence in flight (Comm::ifence). test() advances communication and reports
// whether this rank holds the result; wait() blocks (wait_policy, bounded by
// timeout_ms) and returns it: every rank's blob, indexed by rank, departed
// ranks' entries empty. departed() names those ranks once complete. Both
// throw grove::Error on failure (peers configured differently, a timeout).
class FenceRequest {
 public:
  FenceRequest() = default;
  explicit FenceRequest(std::shared_ptr<detail::FenceCall> call);
  bool test();
  std::vector<std::vector<std::byte>> wait();
  const std::vector<int>& departed() const;

 private:
  std::shared_ptr<detail::FenceCall> call_;
};

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

  // ---- The rest of the collective set (src/coll/*_call.cpp). Sizes are in
  // bytes; every rank must pass the same sizes, counts and root. A
  // non-blocking or persistent call keeps using the buffers (and only the
  // buffers: counts are copied) until it completes.

  // Scatter: at `root`, `send` holds size() blocks of recv.size() bytes in
  // rank order (ignored elsewhere); rank i receives block i into `recv`.
  void scatter(std::span<const std::byte> send, std::span<std::byte> recv, int root);
  Request iscatter(std::span<const std::byte> send, std::span<std::byte> recv, int root);
  Persistent scatter_init(std::span<const std::byte> send, std::span<std::byte> recv, int root);

  // Gather: every rank's `send` (same length everywhere) lands at `root` in
  // rank order; `recv` (size() * send.size() bytes) is used at the root only.
  void gather(std::span<const std::byte> send, std::span<std::byte> recv, int root);
  Request igather(std::span<const std::byte> send, std::span<std::byte> recv, int root);
  Persistent gather_init(std::span<const std::byte> send, std::span<std::byte> recv, int root);

  // Allgather: every rank's `send` lands on every rank in rank order; `recv`
  // is size() * send.size() bytes. In place: `buffer` holds this rank's
  // block at rank() * buffer.size() / size().
  void allgather(std::span<const std::byte> send, std::span<std::byte> recv);
  Request iallgather(std::span<const std::byte> send, std::span<std::byte> recv);
  Persistent allgather_init(std::span<const std::byte> send, std::span<std::byte> recv);
  void allgather(std::span<std::byte> buffer);
  Request iallgather(std::span<std::byte> buffer);
  Persistent allgather_init(std::span<std::byte> buffer);

  // Allgatherv: rank i contributes counts[i] bytes (zero allowed), placed at
  // offsets[i] of every rank's `recv` (offsets empty: packed in rank order).
  // Blocks must not overlap; bytes between them are left alone.
  void allgatherv(std::span<const std::byte> send, std::span<std::byte> recv,
                  std::span<const size_t> counts, std::span<const size_t> offsets = {});
  Request iallgatherv(std::span<const std::byte> send, std::span<std::byte> recv,
                      std::span<const size_t> counts, std::span<const size_t> offsets = {});
  Persistent allgatherv_init(std::span<const std::byte> send, std::span<std::byte> recv,
                             std::span<const size_t> counts, std::span<const size_t> offsets = {});

  // Alltoall: block j of `send` goes to rank j, landing at block rank() of
  // its `recv`; both are size() blocks. In place: `buffer` is both.
  void alltoall(std::span<const std::byte> send, std::span<std::byte> recv);
  Request ialltoall(std::span<const std::byte> send, std::span<std::byte> recv);
  Persistent alltoall_init(std::span<const std::byte> send, std::span<std::byte> recv);
  void alltoall(std::span<std::byte> buffer);
  Request ialltoall(std::span<std::byte> buffer);
  Persistent alltoall_init(std::span<std::byte> buffer);

  // Alltoallv: send_counts[j] bytes at send_offsets[j] go to rank j;
  // recv_counts[i] bytes from rank i land at recv_offsets[i] (offsets empty:
  // packed). A pair's counts must agree, as in MPI.
  struct AlltoallvLayout {
    std::span<const size_t> send_counts;
    std::span<const size_t> send_offsets;
    std::span<const size_t> recv_counts;
    std::span<const size_t> recv_offsets;
  };
  void alltoallv(std::span<const std::byte> send, std::span<std::byte> recv,
                 const AlltoallvLayout& layout);
  Request ialltoallv(std::span<const std::byte> send, std::span<std::byte> recv,
                     const AlltoallvLayout& layout);
  Persistent alltoallv_init(std::span<const std::byte> send, std::span<std::byte> recv,
                            const AlltoallvLayout& layout);

  // Reduce: `op` over every rank's `send` (elements of `type`) into the
  // root's `recv` (same length; unused elsewhere).
  void reduce(std::span<const std::byte> send, std::span<std::byte> recv, Datatype type,
              ReduceOp op, int root);
  Request ireduce(std::span<const std::byte> send, std::span<std::byte> recv, Datatype type,
                  ReduceOp op, int root);
  Persistent reduce_init(std::span<const std::byte> send, std::span<std::byte> recv, Datatype type,
                         ReduceOp op, int root);

  // Allreduce: `op` over every rank's `send` into every rank's `recv`. In
  // place: `buffer` is both.
  void allreduce(std::span<const std::byte> send, std::span<std::byte> recv, Datatype type,
                 ReduceOp op);
  Request iallreduce(std::span<const std::byte> send, std::span<std::byte> recv, Datatype type,
                     ReduceOp op);
  Persistent allreduce_init(std::span<const std::byte> send, std::span<std::byte> recv,
                            Datatype type, ReduceOp op);
  void allreduce(std::span<std::byte> buffer, Datatype type, ReduceOp op);
  Request iallreduce(std::span<std::byte> buffer, Datatype type, ReduceOp op);
  Persistent allreduce_init(std::span<std::byte> buffer, Datatype type, ReduceOp op);

  // Reduce-scatter (equal blocks): `send` holds size() blocks of recv.size()
  // bytes; rank i's `recv` gets `op` over every rank's block i.
  void reduce_scatter(std::span<const std::byte> send, std::span<std::byte> recv, Datatype type,
                      ReduceOp op);
  Request ireduce_scatter(std::span<const std::byte> send, std::span<std::byte> recv, Datatype type,
                          ReduceOp op);
  Persistent reduce_scatter_init(std::span<const std::byte> send, std::span<std::byte> recv,
                                 Datatype type, ReduceOp op);

  // Typed forms: the element type gives the Datatype; `send` converts from
  // any contiguous range of T (std::vector<T>, std::span<T>).
  template <class T>
  void allgather(std::span<const std::type_identity_t<T>> send, std::span<T> recv) {
    allgather(std::as_bytes(send), std::as_writable_bytes(recv));
  }
  template <class T>
  void alltoall(std::span<const std::type_identity_t<T>> send, std::span<T> recv) {
    alltoall(std::as_bytes(send), std::as_writable_bytes(recv));
  }
  template <class T>
  void scatter(std::span<const std::type_identity_t<T>> send, std::span<T> recv, int root) {
    scatter(std::as_bytes(send), std::as_writable_bytes(recv), root);
  }
  template <class T>
  void gather(std::span<const std::type_identity_t<T>> send, std::span<T> recv, int root) {
    gather(std::as_bytes(send), std::as_writable_bytes(recv), root);
  }
  template <class T>
  void reduce(std::span<const std::type_identity_t<T>> send, std::span<T> recv, ReduceOp op,
              int root) {
    reduce(std::as_bytes(send), std::as_writable_bytes(recv), datatype_of<T>(), op, root);
  }
  template <class T>
  Request ireduce(std::span<const std::type_identity_t<T>> send, std::span<T> recv, ReduceOp op,
                  int root) {
    return ireduce(std::as_bytes(send), std::as_writable_bytes(recv), datatype_of<T>(), op, root);
  }
  template <class T>
  void allreduce(std::span<const std::type_identity_t<T>> send, std::span<T> recv, ReduceOp op) {
    allreduce(std::as_bytes(send), std::as_writable_bytes(recv), datatype_of<T>(), op);
  }
  template <class T>
  Request iallreduce(std::span<const std::type_identity_t<T>> send, std::span<T> recv,
                     ReduceOp op) {
    return iallreduce(std::as_bytes(send), std::as_writable_bytes(recv), datatype_of<T>(), op);
  }
  template <class T>
  Persistent allreduce_init(std::span<const std::type_identity_t<T>> send, std::span<T> recv,
                            ReduceOp op) {
    return allreduce_init(std::as_bytes(send), std::as_writable_bytes(recv), datatype_of<T>(), op);
  }
  template <class T>
  void allreduce(std::span<T> buffer, ReduceOp op) {
    allreduce(std::as_writable_bytes(buffer), datatype_of<T>(), op);
  }
  template <class T>
  Request iallreduce(std::span<T> buffer, ReduceOp op) {
    return iallreduce(std::as_writable_bytes(buffer), datatype_of<T>(), op);
  }
  template <class T>
  void reduce_scatter(std::span<const std::type_identity_t<T>> send, std::span<T> recv,
                      ReduceOp op) {
    reduce_scatter(std::as_bytes(send), std::as_writable_bytes(recv), datatype_of<T>(), op);
  }

  // The fence: an allgather of variable-size blobs (the "modex") that keeps
  // going while ranks depart (grove run --on-failure=notify). Returns every
  // living rank's blob, indexed by rank; a departed rank's entry is empty
  // (FenceRequest::departed() names them). A barrier is a fence with empty
  // blobs. Contributions roll up a k-ary tree (rollup_radix) and the result
  // is released down a derived low-radix tree (release_radix,
  // low_radix_release); docs/fence.md. World communicator only.
  std::vector<std::vector<std::byte>> fence(std::span<const std::byte> mine);
  FenceRequest ifence(std::span<const std::byte> mine);

  // ---- Point-to-point (api/p2p.cpp): tagged messages between two ranks of
  // this communicator, on the collectives' transport, wait policy and
  // timeout. A tag is 0..max_tag; point-to-point tags never match a
  // collective's messages. Messages from one rank with one tag arrive in the
  // order they were sent. A receive or probe may name any_source and/or
  // any_tag; such a receive is matched when it is first tested or waited on
  // (an exact receive posted after it may match first). Sending to yourself
  // works. Buffers of isend/irecv must stay valid until the Request
  // completes; a large isend needs the sender to test or wait (progress)
  // until the receiver has taken it.
  static constexpr int any_source = -1;
  static constexpr int any_tag = -1;
  static constexpr int max_tag = (1 << 30) - 1;

  // Blocking: returns once `data` may be reused.
  void send(std::span<const std::byte> data, int dest, int tag);
  Request isend(std::span<const std::byte> data, int dest, int tag);
  // Blocking: returns what arrived. A message longer than `buffer` is
  // grove::Error(truncated).
  MessageInfo recv(std::span<std::byte> buffer, int source, int tag);
  Request irecv(std::span<std::byte> buffer, int source, int tag);
  // Waits for a matching message without receiving it; iprobe looks once.
  MessageInfo probe(int source, int tag);
  std::optional<MessageInfo> iprobe(int source, int tag);

  // Typed forms; recv's MessageInfo::bytes is in bytes, and a message that is
  // not a whole number of elements is grove::Error(mismatch).
  template <class T>
  void send(std::span<const std::type_identity_t<T>> data, int dest, int tag) {
    send(std::as_bytes(data), dest, tag);
  }
  template <class T>
  Request isend(std::span<const std::type_identity_t<T>> data, int dest, int tag) {
    return isend(std::as_bytes(data), dest, tag);
  }
  template <class T>
  requires(!std::is_same_v<T, std::byte>) MessageInfo
      recv(std::span<T> buffer, int source, int tag) {
    const MessageInfo info = recv(std::as_writable_bytes(buffer), source, tag);
    check_whole_elements(info, sizeof(T));
    return info;
  }
  template <class T>
  requires(!std::is_same_v<T, std::byte>) Request irecv(std::span<T> buffer, int source, int tag) {
    return irecv(std::as_writable_bytes(buffer), source, tag);
  }

  // Communicators. split: the ranks that pass the same `color` (>= 0) form a
  // new communicator, ranked by (key, rank here); dup: the same ranks. Each
  // new communicator has its own context id, so its collectives never mix
  // with another communicator's. Collective over this communicator.
  Comm split(int color, int key);
  Comm dup();

  // Internal: communicators are made by Session and Comm::split/dup.
  explicit Comm(std::shared_ptr<detail::CommState> state);
  detail::CommState& state() const { return *state_; }
  const std::shared_ptr<detail::CommState>& state_ptr() const { return state_; }

 private:
  void check_whole_elements(const MessageInfo& info, size_t element) const;

  std::shared_ptr<detail::CommState> state_;
};

}  // namespace grove
