// UcxTransport: active messages.
//
// All grove AMs travel under one UCP AM id; the header carries the source
// rank and grove's id. So a message for an id whose handler is not registered
// yet is not lost (UCP would drop it): it is held and delivered, in order,
// once a handler for its id appears. Large messages arrive by rendezvous
// (UCP_AM_RECV_ATTR_FLAG_RNDV) and are fetched with ucp_am_recv_data_nbx;
// there is no size limit beyond memory.

#include <cstring>

#include <fmt/format.h>

#include "transport/ucx/ucx_transport_impl.hpp"

namespace grove::ucx {
namespace {

constexpr unsigned kUcpAmId = 0;
// A pooled AM buffer larger than this is freed when returned, so one huge
// message does not pin its memory for the rest of the job.
constexpr size_t kKeptAmCapacity = size_t{1} << 20;

}  // namespace

void UcxTransport::register_am_dispatch() {
  ucp_am_handler_param_t param{};
  param.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                     UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
  param.id = kUcpAmId;
  param.cb = &UcxTransport::on_am;
  param.arg = this;
  // Whole messages only, and eager data that outlives the callback, so
  // delivery can wait until ucp_worker_progress has returned.
  param.flags = UCP_AM_FLAG_WHOLE_MSG | UCP_AM_FLAG_PERSISTENT_DATA;
  const ucs_status_t status = ucp_worker_set_am_recv_handler(worker_.get(), &param);
  if (status != UCS_OK) {
    throw Error(Errc::transport, fmt::format("ucx: rank {}: ucp_worker_set_am_recv_handler: {}",
                                             rank_, ucs_status_string(status)));
  }
}

AmBuffer* UcxTransport::take_am_buffer(size_t length) {
  if (free_am_buffers_.empty()) {
    am_buffers_.push_back(std::make_unique<AmBuffer>());
    free_am_buffers_.push_back(am_buffers_.back().get());
  }
  AmBuffer* buffer = free_am_buffers_.back();
  free_am_buffers_.pop_back();
  buffer->bytes.resize(length);
  buffer->ready = false;
  buffer->failed = false;
  return buffer;
}

void UcxTransport::give_am_buffer(AmBuffer* buffer) {
  if (buffer->bytes.capacity() > kKeptAmCapacity) {
    std::vector<std::byte>().swap(buffer->bytes);
  }
  free_am_buffers_.push_back(buffer);
}

void UcxTransport::set_am_handler(uint16_t id, AmHandler handler) {
  auto it = handlers_.find(id);
  if (it != handlers_.end()) {
    // The old handler may be running right now (a handler replacing itself).
    if (delivering_ > 0) retired_handlers_.push_back(std::move(it->second));
    handlers_.erase(it);
  }
  if (!handler) return;
  handlers_.emplace(id, std::make_unique<AmHandler>(std::move(handler)));
  if (!held_.empty()) held_ready_ = true;
}

void UcxTransport::on_am_send_done(void* request, ucs_status_t /*status*/, void* /*user_data*/) {
  Op* op = static_cast<Op*>(request);
  UcxTransport* self = op->owner;
  self->give_am_buffer(op->buffer);
  self->ops_->put(op);
}

void UcxTransport::am_send(int peer, uint16_t id, std::span<const std::byte> payload) {
  check_peer(peer, "am_send");
  Peer& target = peers_[static_cast<size_t>(peer)];
  // A departed peer cannot receive; the failure view tells the sender's
  // protocol, so the message is dropped here.
  if (target.failed || target.ep == nullptr) return;

  // Header and payload share one pooled buffer that lives until completion.
  AmBuffer* buffer = take_am_buffer(sizeof(AmHeader) + payload.size());
  const AmHeader header{static_cast<uint32_t>(rank_), id, 0};
  std::memcpy(buffer->bytes.data(), &header, sizeof header);
  if (!payload.empty()) {
    std::memcpy(buffer->bytes.data() + sizeof header, payload.data(), payload.size());
  }
  Op* op = ops_->get();
  op->owner = this;
  op->kind = OpKind::am_send;
  op->peer = peer;
  op->buffer = buffer;
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_REQUEST | UCP_OP_ATTR_FIELD_CALLBACK;
  param.request = op;
  param.cb.send = &UcxTransport::on_am_send_done;
  ucs_status_ptr_t result =
      ucp_am_send_nbx(target.ep, kUcpAmId, buffer->bytes.data(), sizeof header,
                      buffer->bytes.data() + sizeof header, payload.size(), &param);
  if (UCS_PTR_IS_PTR(result) && result != nullptr) return;  // on_am_send_done frees
  ops_->put(op);
  give_am_buffer(buffer);
  const ucs_status_t status = UCS_PTR_STATUS(result);
  if (status != UCS_OK && status_from_ucs(status, 0).code == Errc::transport) {
    throw Error(Errc::transport, fmt::format("ucx am_send: rank {}: to rank {}, id {}: {}", rank_,
                                             peer, id, ucs_status_string(status)));
  }
  // Any other error means the peer is gone: the message is dropped.
}

// Runs inside ucp_worker_progress: records the arrival and keeps UCP's data
// (UCS_INPROGRESS) so it can be handed over after progress returns.
ucs_status_t UcxTransport::on_am(void* arg, const void* header, size_t header_length, void* data,
                                 size_t length, const ucp_am_recv_param_t* param) {
  auto* self = static_cast<UcxTransport*>(arg);
  AmHeader h{};
  if (header_length != sizeof h) return UCS_OK;  // not a grove message: dropped
  std::memcpy(&h, header, sizeof h);
  if (h.source >= static_cast<uint32_t>(self->size_)) return UCS_OK;

  AmArrival arrival;
  arrival.source = static_cast<int>(h.source);
  arrival.id = h.id;
  arrival.length = length;
  ucs_status_t keep = UCS_OK;
  if ((param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0) {
    arrival.desc = data;
    arrival.rndv = true;
    keep = UCS_INPROGRESS;
  } else if (length == 0) {
    // Nothing to keep.
  } else if ((param->recv_attr & UCP_AM_RECV_ATTR_FLAG_DATA) != 0) {
    arrival.desc = data;
    arrival.data = static_cast<const std::byte*>(data);
    keep = UCS_INPROGRESS;
  } else {
    arrival.buffer = self->take_am_buffer(length);
    std::memcpy(arrival.buffer->bytes.data(), data, length);
    arrival.buffer->ready = true;
  }
  self->arrivals_.push_back(arrival);
  return keep;
}

void UcxTransport::on_am_recv_done(void* request, ucs_status_t status, size_t /*length*/,
                                   void* /*user_data*/) {
  Op* op = static_cast<Op*>(request);
  op->buffer->ready = true;
  op->buffer->failed = status != UCS_OK;
  op->owner->ops_->put(op);
}

void UcxTransport::start_rendezvous(AmArrival& arrival) {
  arrival.started = true;
  arrival.buffer = take_am_buffer(arrival.length);
  void* desc = arrival.desc;
  arrival.desc = nullptr;  // UCP owns the descriptor from here on, even on failure
  Op* op = ops_->get();
  op->owner = this;
  op->kind = OpKind::am_recv;
  op->peer = arrival.source;
  op->buffer = arrival.buffer;
  size_t received = 0;
  ucp_request_param_t param{};
  param.op_attr_mask =
      UCP_OP_ATTR_FIELD_REQUEST | UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_RECV_INFO;
  param.request = op;
  param.cb.recv_am = &UcxTransport::on_am_recv_done;
  param.recv_info.length = &received;
  ucs_status_ptr_t result = ucp_am_recv_data_nbx(worker_.get(), desc, arrival.buffer->bytes.data(),
                                                 arrival.length, &param);
  if (UCS_PTR_IS_PTR(result) && result != nullptr) return;  // on_am_recv_done marks it
  ops_->put(op);
  arrival.buffer->ready = true;
  arrival.buffer->failed = UCS_PTR_STATUS(result) != UCS_OK;
}

void UcxTransport::release_arrival(AmArrival& arrival) {
  if (arrival.desc != nullptr) ucp_am_data_release(worker_.get(), arrival.desc);
  if (arrival.buffer != nullptr) give_am_buffer(arrival.buffer);
  arrival.desc = nullptr;
  arrival.buffer = nullptr;
}

// Keeps a message until a handler for its id is registered. UCP's data is
// copied out and released, so holding cannot pin UCP's receive buffers.
void UcxTransport::hold(AmArrival arrival) {
  if (arrival.desc != nullptr) {
    AmBuffer* buffer = take_am_buffer(arrival.length);
    std::memcpy(buffer->bytes.data(), arrival.data, arrival.length);
    ucp_am_data_release(worker_.get(), arrival.desc);
    arrival.desc = nullptr;
    arrival.data = nullptr;
    arrival.buffer = buffer;
  }
  held_.push_back(arrival);
}

void UcxTransport::deliver(AmArrival arrival) {
  if (arrival.rndv && arrival.buffer->failed) {
    release_arrival(arrival);  // the sender died mid-transfer
    return;
  }
  // Older held messages for this id go first.
  if (held_ready_) run_held();
  auto it = handlers_.find(arrival.id);
  if (it == handlers_.end()) {
    hold(arrival);
    return;
  }
  AmHandler* handler = it->second.get();
  const std::byte* bytes = arrival.buffer != nullptr ? arrival.buffer->bytes.data() : arrival.data;
  struct Cleanup {
    UcxTransport* self;
    AmArrival& arrival;
    ~Cleanup() {
      self->release_arrival(arrival);
      if (--self->delivering_ == 0) self->retired_handlers_.clear();
    }
  };
  ++delivering_;
  Cleanup cleanup{this, arrival};
  (*handler)(arrival.source, std::span<const std::byte>(bytes, arrival.length));
}

bool UcxTransport::run_held() {
  held_ready_ = false;
  std::vector<AmArrival> pending;
  pending.swap(held_);
  std::vector<AmArrival> still_held;
  bool any = false;
  for (AmArrival& arrival : pending) {
    if (handlers_.count(arrival.id) == 0) {
      still_held.push_back(arrival);
      continue;
    }
    any = true;
    deliver(arrival);
  }
  // Messages held during the loop (by nested progress) are newer.
  held_.insert(held_.begin(), still_held.begin(), still_held.end());
  return any;
}

bool UcxTransport::run_arrivals() {
  // Start every rendezvous now so they transfer in parallel; deliveries stay
  // in arrival order.
  for (size_t i = arrivals_head_; i < arrivals_.size(); ++i) {
    if (arrivals_[i].rndv && !arrivals_[i].started) start_rendezvous(arrivals_[i]);
  }
  bool any = false;
  while (arrivals_head_ < arrivals_.size()) {
    const AmArrival& front = arrivals_[arrivals_head_];
    if (front.rndv && !front.buffer->ready) break;
    // A copy: a handler may progress again and grow or clear arrivals_.
    const AmArrival arrival = front;
    ++arrivals_head_;
    any = true;
    deliver(arrival);
  }
  if (arrivals_head_ == arrivals_.size()) {
    arrivals_.clear();
    arrivals_head_ = 0;
  }
  return any;
}

void UcxTransport::drop_arrivals() {
  for (size_t i = arrivals_head_; i < arrivals_.size(); ++i) {
    // A started rendezvous still owns its buffer until the worker is gone.
    if (arrivals_[i].desc != nullptr) ucp_am_data_release(worker_.get(), arrivals_[i].desc);
  }
  arrivals_.clear();
  arrivals_head_ = 0;
  held_.clear();
}

}  // namespace grove::ucx
