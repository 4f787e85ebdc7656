#pragma once
// Request memory for UCP operations. Every UCP call is given its request
// (UCP_OP_ATTR_FIELD_REQUEST) from this pool, so the completion routine and
// its context are stored before the operation starts: a UCP callback can never
// observe a half-filled request, and posting allocates nothing once the pool
// has grown to the number of operations in flight.
//
// Layout of one block: [UCP's private request, `ucp_prefix` bytes][Op].
// UCP is handed the address of the Op (UCP's documented convention: the
// request size bytes lie *before* the pointer passed in).

#include <cstddef>
#include <cstdint>
#include <vector>

#include "transport/transport.hpp"

namespace grove::ucx {

class UcxTransport;
struct AmBuffer;
struct Op;

enum class OpKind : uint8_t { send, recv, am_send, am_recv, close, rma };

// The fields every operation sets or reads; OpPool::get resets exactly these.
struct OpHeader {
  UcxTransport* owner = nullptr;
  CompletionFn done = nullptr;  // send/recv: the caller's completion
  void* context = nullptr;
  size_t length = 0;  // send, rma: bytes moved
  int peer = -1;
  OpKind kind = OpKind::send;
  // recv: the caller cancelled it (Transport::cancel), so UCS_ERR_CANCELED
  // means Errc::cancelled rather than a failed peer.
  bool cancelled = false;
  // recv: membership in the peer's list of posted receives, so a peer failure
  // can cancel exactly the receives that name it.
  Op* prev = nullptr;
  Op* next = nullptr;
  AmBuffer* buffer = nullptr;  // am_send / am_recv: the bytes in flight
};

struct Op : OpHeader {
  // rma atomics: operand and new value (UCX reads them until completion),
  // the caller's fetch word and the operation's width in bytes. Not reset
  // by OpPool::get (a message's Op would pay for clearing them on every
  // post): rma_atomic writes each of them before UCX or a completion reads
  // them, and nothing else reads them.
  uint64_t rma_words[2] = {0, 0};
  uint32_t rma_words32[2] = {0, 0};
  uint64_t* rma_fetch = nullptr;
  uint8_t rma_width = 0;
};

class OpPool {
 public:
  explicit OpPool(size_t ucp_prefix);
  ~OpPool();
  OpPool(const OpPool&) = delete;
  OpPool& operator=(const OpPool&) = delete;

  // An Op whose header is reset (its RMA fields are stale); grows the pool
  // by a chunk when empty.
  Op* get();
  // Returns an Op. UCP may still write its own header (before the Op) after
  // the completion callback returns, so an Op put back inside a callback must
  // not be reposted before the callback has returned; grove never posts from
  // inside a UCP callback.
  void put(Op* op);

 private:
  void grow();

  size_t prefix_;  // UCP's request size, rounded up to the block alignment
  size_t stride_;
  std::vector<std::byte*> chunks_;
  std::vector<Op*> free_;
};

}  // namespace grove::ucx
