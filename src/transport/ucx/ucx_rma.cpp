// UcxTransport: one-sided access. Regions are allocated by UCX
// (ucp_mem_map with ALLOCATE), so on one host they live in a shared-memory
// segment (UCX's sysv or posix memory domain): peers on the host map them
// (ucp_rkey_ptr) and UCX's shared-memory transports serve put, get and the
// atomics with CPU instructions. Elsewhere UCX picks a network path (TCP's
// put, or its software emulation over active messages).
//
// Key layout: [u64 address][u64 size][UCX packed rkey].

#include <cstring>

#include <fmt/format.h>

#include "core/params.hpp"
#include "transport/rma_local.hpp"
#include "transport/ucx/ucx_transport_impl.hpp"

namespace grove::ucx {
namespace {

const params::BoolParam rma_direct{
    "rma_direct", true,
    "one-sided access to a peer's memory that is mapped in this process (same host) by loads "
    "and stores instead of UCX put/get/atomics"};

constexpr size_t kKeyHeader = 2 * sizeof(uint64_t);

class UcxRegion final : public RmaRegion {
 public:
  UcxRegion(ucp_context_h context, ucp_mem_h memh, void* address, size_t size,
            std::vector<std::byte> key)
      : context_(context), memh_(memh) {
    data_ = static_cast<std::byte*>(address);
    size_ = size;
    key_ = std::move(key);
  }
  ~UcxRegion() override { ucp_mem_unmap(context_, memh_); }

 private:
  ucp_context_h context_;
  ucp_mem_h memh_;
};

class UcxTarget final : public RmaTarget {
 public:
  UcxTarget(int peer, uint64_t address, size_t size, ucp_rkey_h rkey, std::byte* mapped)
      : peer_(peer), address_(address), rkey_(rkey) {
    size_ = size;
    mapped_ = mapped;
  }
  ~UcxTarget() override {
    if (rkey_ != nullptr) ucp_rkey_destroy(rkey_);
  }
  int peer() const { return peer_; }
  uint64_t address() const { return address_; }
  ucp_rkey_h rkey() const { return rkey_; }

 private:
  int peer_;
  uint64_t address_;
  ucp_rkey_h rkey_;
};

UcxTarget& as_ucx(RmaTarget& target) {
  auto* t = dynamic_cast<UcxTarget*>(&target);
  if (t == nullptr) {
    throw Error(Errc::internal, "ucx rma: a target attached by another transport was passed in");
  }
  return *t;
}

void check_range(const UcxTarget& target, size_t offset, size_t length, const char* call,
                 int rank) {
  if (offset > target.size() || length > target.size() - offset) {
    throw Error(Errc::invalid_argument,
                fmt::format("ucx {}: rank {}: bytes [{}, {}) are outside rank {}'s region of {} B",
                            call, rank, offset, offset + length, target.peer(), target.size()));
  }
}

ucp_atomic_op_t ucp_op(RmaAtomicOp op) {
  switch (op) {
    case RmaAtomicOp::add:
      return UCP_ATOMIC_OP_ADD;
    case RmaAtomicOp::band:
      return UCP_ATOMIC_OP_AND;
    case RmaAtomicOp::bor:
      return UCP_ATOMIC_OP_OR;
    case RmaAtomicOp::bxor:
      return UCP_ATOMIC_OP_XOR;
    case RmaAtomicOp::cswap:
      return UCP_ATOMIC_OP_CSWAP;
  }
  return UCP_ATOMIC_OP_LAST;
}

}  // namespace

std::unique_ptr<RmaRegion> UcxTransport::rma_allocate(size_t bytes) {
  const size_t length = std::max<size_t>(bytes, 8);
  ucp_mem_map_params_t params{};
  params.field_mask = UCP_MEM_MAP_PARAM_FIELD_LENGTH | UCP_MEM_MAP_PARAM_FIELD_FLAGS;
  params.length = length;
  params.flags = UCP_MEM_MAP_ALLOCATE;
  ucp_mem_h memh = nullptr;
  ucs_status_t status = ucp_mem_map(context_.get(), &params, &memh);
  if (status != UCS_OK) {
    throw Error(Errc::transport, fmt::format("ucx: rank {}: ucp_mem_map of {} B failed: {}", rank_,
                                             length, ucs_status_string(status)));
  }
  ucp_mem_attr_t attr{};
  attr.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS | UCP_MEM_ATTR_FIELD_LENGTH;
  status = ucp_mem_query(memh, &attr);
  void* packed = nullptr;
  size_t packed_size = 0;
  // Regions start on a 64-byte boundary (UCX allocates whole pages): rings
  // place alignas(64) credit lines in them.
  if (status == UCS_OK && reinterpret_cast<uintptr_t>(attr.address) % 64 != 0)
    status = UCS_ERR_INVALID_ADDR;
  if (status == UCS_OK) status = ucp_rkey_pack(context_.get(), memh, &packed, &packed_size);
  if (status != UCS_OK) {
    ucp_mem_unmap(context_.get(), memh);
    throw Error(Errc::transport, fmt::format("ucx: rank {}: registering {} B for RMA failed: {}",
                                             rank_, length, ucs_status_string(status)));
  }
  std::vector<std::byte> key(kKeyHeader + packed_size);
  const uint64_t header[2] = {reinterpret_cast<uintptr_t>(attr.address), bytes};
  std::memcpy(key.data(), header, kKeyHeader);
  std::memcpy(key.data() + kKeyHeader, packed, packed_size);
  ucp_rkey_buffer_release(packed);
  std::memset(attr.address, 0, length);
  auto region =
      std::make_unique<UcxRegion>(context_.get(), memh, attr.address, bytes, std::move(key));
  return region;
}

std::unique_ptr<RmaTarget> UcxTransport::rma_attach(int peer, std::span<const std::byte> key) {
  check_peer(peer, "rma_attach");
  if (key.size() <= kKeyHeader) {
    throw Error(Errc::protocol,
                fmt::format("ucx rma_attach: rank {}: rank {}'s key has {} bytes, too short for a "
                            "UCX memory key",
                            rank_, peer, key.size()));
  }
  uint64_t header[2];
  std::memcpy(header, key.data(), kKeyHeader);
  const bool direct = rma_direct.get();
  // This rank's own region: the address is valid here.
  if (peer == rank_ && direct) {
    return std::make_unique<UcxTarget>(peer, header[0], header[1], nullptr,
                                       reinterpret_cast<std::byte*>(header[0]));
  }
  Peer& target = peers_[static_cast<size_t>(peer)];
  if (target.failed || target.ep == nullptr) {
    throw Error(Errc::peer_failed,
                fmt::format("ucx rma_attach: rank {}: rank {} has failed", rank_, peer));
  }
  ucp_rkey_h rkey = nullptr;
  const ucs_status_t status = ucp_ep_rkey_unpack(target.ep, key.data() + kKeyHeader, &rkey);
  if (status != UCS_OK) {
    throw Error(Errc::protocol,
                fmt::format("ucx rma_attach: rank {}: rank {}'s memory key was refused: {}", rank_,
                            peer, ucs_status_string(status)));
  }
  void* local = nullptr;
  std::byte* mapped = nullptr;
  if (direct && ucp_rkey_ptr(rkey, header[0], &local) == UCS_OK) {
    mapped = static_cast<std::byte*>(local);
  }
  return std::make_unique<UcxTarget>(peer, header[0], header[1], rkey, mapped);
}

void UcxTransport::on_rma_done(void* request, ucs_status_t status, void* /*user_data*/) {
  Op* op = static_cast<Op*>(request);
  UcxTransport* self = op->owner;
  self->defer(op->done, op->context, status_from_ucs(status, status == UCS_OK ? op->length : 0));
  self->ops_->put(op);
}

ucp_ep_h UcxTransport::rma_endpoint(int peer, CompletionFn done, void* context) {
  Peer& target = peers_[static_cast<size_t>(peer)];
  if (target.failed || target.ep == nullptr) {
    done(context, status_from_ucs(UCS_ERR_CONNECTION_RESET, 0));
    return nullptr;
  }
  return target.ep;
}

void UcxTransport::finish_rma(ucs_status_ptr_t result, Op* op) {
  if (UCS_PTR_IS_PTR(result) && result != nullptr) return;  // on_rma_done will run
  const CompletionFn done = op->done;
  void* context = op->context;
  const size_t length = op->length;
  ops_->put(op);
  const ucs_status_t status = UCS_PTR_STATUS(result);
  done(context, status_from_ucs(status, status == UCS_OK ? length : 0));
}

namespace {

Op* rma_op(OpPool& pool, UcxTransport* owner, int peer, CompletionFn done, void* context,
           size_t length) {
  Op* op = pool.get();
  op->owner = owner;
  op->kind = OpKind::rma;
  op->peer = peer;
  op->done = done;
  op->context = context;
  op->length = length;
  return op;
}

ucp_request_param_t rma_param(Op* op, ucp_send_nbx_callback_t callback) {
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_REQUEST | UCP_OP_ATTR_FIELD_CALLBACK;
  param.request = op;
  param.cb.send = callback;
  return param;
}

}  // namespace

void UcxTransport::rma_put(RmaTarget& target_in, size_t offset, const void* data, size_t length,
                           CompletionFn done, void* context) {
  UcxTarget& target = as_ucx(target_in);
  check_range(target, offset, length, "rma_put", rank_);
  if (target.rkey() == nullptr) {  // this rank's own region, mapped
    std::memcpy(target.mapped() + offset, data, length);
    done(context, Status{true, Errc::internal, length});
    return;
  }
  ucp_ep_h ep = rma_endpoint(target.peer(), done, context);
  if (ep == nullptr) return;
  Op* op = rma_op(*ops_, this, target.peer(), done, context, length);
  const ucp_request_param_t param = rma_param(op, &UcxTransport::on_rma_done);
  finish_rma(ucp_put_nbx(ep, data, length, target.address() + offset, target.rkey(), &param), op);
}

void UcxTransport::rma_get(RmaTarget& target_in, size_t offset, void* data, size_t length,
                           CompletionFn done, void* context) {
  UcxTarget& target = as_ucx(target_in);
  check_range(target, offset, length, "rma_get", rank_);
  if (target.rkey() == nullptr) {
    std::memcpy(data, target.mapped() + offset, length);
    done(context, Status{true, Errc::internal, length});
    return;
  }
  ucp_ep_h ep = rma_endpoint(target.peer(), done, context);
  if (ep == nullptr) return;
  Op* op = rma_op(*ops_, this, target.peer(), done, context, length);
  const ucp_request_param_t param = rma_param(op, &UcxTransport::on_rma_done);
  finish_rma(ucp_get_nbx(ep, data, length, target.address() + offset, target.rkey(), &param), op);
}

void UcxTransport::rma_atomic(RmaTarget& target_in, size_t offset, const RmaAtomic& atomic,
                              CompletionFn done, void* context) {
  UcxTarget& target = as_ucx(target_in);
  check_range(target, offset, atomic.width, "rma_atomic", rank_);
  if (!rma_atomic_offered(atomic) || offset % atomic.width != 0) {
    throw Error(Errc::invalid_argument,
                fmt::format("ucx rma_atomic: rank {}: a {}-byte atomic at offset {} (needs 4 or 8 "
                            "bytes, aligned; only add and cswap fetch, cswap always)",
                            rank_, atomic.width, offset));
  }
  if (target.rkey() == nullptr) {  // this rank's own region, mapped
    const uint64_t old = apply_rma_atomic(target.mapped() + offset, atomic);
    if (atomic.fetch != nullptr) *atomic.fetch = old;
    done(context, Status{true, Errc::internal, atomic.width});
    return;
  }
  ucp_ep_h ep = rma_endpoint(target.peer(), done, context);
  if (ep == nullptr) return;
  Op* op = rma_op(*ops_, this, target.peer(), done, context, atomic.width);
  ucp_request_param_t param = rma_param(op, &UcxTransport::on_rma_done);
  param.op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE;
  param.datatype = ucp_dt_make_contig(atomic.width);
  // The operand and (cswap) the swap value live in the Op until completion:
  // UCX reads them after this call returns when the operation is queued.
  if (atomic.width == 4) {
    op->rma_words32[0] =
        static_cast<uint32_t>(atomic.op == RmaAtomicOp::cswap ? atomic.compare : atomic.operand);
    op->rma_words32[1] = static_cast<uint32_t>(atomic.operand);
  } else {
    op->rma_words[0] = atomic.op == RmaAtomicOp::cswap ? atomic.compare : atomic.operand;
    op->rma_words[1] = atomic.operand;
  }
  op->rma_fetch = atomic.fetch;
  op->rma_width = atomic.width;
  const void* buffer =
      atomic.width == 4 ? static_cast<const void*>(&op->rma_words32[0]) : &op->rma_words[0];
  if (atomic.fetch != nullptr) {
    // The reply buffer (cswap: carries the new value in) gets the old value.
    param.op_attr_mask |= UCP_OP_ATTR_FIELD_REPLY_BUFFER;
    param.reply_buffer =
        atomic.width == 4 ? static_cast<void*>(&op->rma_words32[1]) : &op->rma_words[1];
    param.cb.send = &UcxTransport::on_rma_fetch_done;
  }
  ucs_status_ptr_t result = ucp_atomic_op_nbx(ep, ucp_op(atomic.op), buffer, 1,
                                              target.address() + offset, target.rkey(), &param);
  if (UCS_PTR_IS_PTR(result) && result != nullptr) return;
  if (atomic.fetch != nullptr && UCS_PTR_STATUS(result) == UCS_OK) copy_fetched(op);
  finish_rma(result, op);
}

void UcxTransport::copy_fetched(Op* op) {
  *op->rma_fetch = op->rma_width == 4 ? uint64_t{op->rma_words32[1]} : op->rma_words[1];
}

void UcxTransport::on_rma_fetch_done(void* request, ucs_status_t status, void* user_data) {
  Op* op = static_cast<Op*>(request);
  if (status == UCS_OK) copy_fetched(op);
  on_rma_done(request, status, user_data);
}

void UcxTransport::rma_flush(int peer, CompletionFn done, void* context) {
  if (peer >= size_) check_peer(peer, "rma_flush");
  Op* op = rma_op(*ops_, this, peer, done, context, 0);
  const ucp_request_param_t param = rma_param(op, &UcxTransport::on_rma_done);
  ucs_status_ptr_t result;
  if (peer < 0) {
    result = ucp_worker_flush_nbx(worker_.get(), &param);
  } else {
    Peer& target = peers_[static_cast<size_t>(peer)];
    if (target.failed || target.ep == nullptr) {
      ops_->put(op);
      done(context, status_from_ucs(UCS_ERR_CONNECTION_RESET, 0));
      return;
    }
    result = ucp_ep_flush_nbx(target.ep, &param);
  }
  finish_rma(result, op);
}

void UcxTransport::rma_fence() {
  const ucs_status_t status = ucp_worker_fence(worker_.get());
  if (status != UCS_OK) {
    throw Error(Errc::transport, fmt::format("ucx: rank {}: ucp_worker_fence failed: {}", rank_,
                                             ucs_status_string(status)));
  }
}

}  // namespace grove::ucx
