// UcxTransport: tagged messages, peer failures, progress and blocking.

#include <poll.h>

#include <ctime>

#include <fmt/format.h>

#include "transport/ucx/ucx_transport_impl.hpp"

namespace grove::ucx {
namespace {

constexpr Tag kSourceMask = ~tag::kTagMask;
constexpr Tag kAllBits = ~Tag{0};
// ucp_worker_progress is called until it reports nothing or records something
// for user code, at most this often per progress(): a flood of arrivals
// cannot keep one call from returning.
constexpr int kMaxProgressRounds = 64;

Tag wire_tag(int source, Tag tag) {
  return (static_cast<Tag>(source) << tag::kTagBits) | tag;
}

void check_tag(Tag tag, const char* operation, int rank) {
  if ((tag & kSourceMask) != 0) {
    throw Error(Errc::invalid_argument,
                fmt::format("ucx {}: rank {}: tag {:#x} uses bits above the {}-bit transport tag",
                            operation, rank, tag, tag::kTagBits));
  }
}

}  // namespace

Status status_from_ucs(ucs_status_t status, size_t length) {
  Status out;
  out.length = length;
  switch (status) {
    case UCS_OK:
      out.ok = true;
      return out;
    case UCS_ERR_MESSAGE_TRUNCATED:
      out.code = Errc::truncated;
      break;
    case UCS_ERR_NO_MEMORY:
    case UCS_ERR_INVALID_PARAM:
    case UCS_ERR_UNSUPPORTED:
    case UCS_ERR_NOT_IMPLEMENTED:
      out.code = Errc::transport;
      break;
    default:
      // In peer error-handling mode every other failure of an operation
      // (endpoint timeout, connection reset, unreachable, and the
      // cancellations grove issues when a peer fails) means the peer is gone.
      out.code = Errc::peer_failed;
      break;
  }
  out.ok = false;
  return out;
}

void UcxTransport::defer(CompletionFn done, void* context, const Status& status) {
  completions_.push_back(Completion{done, context, status});
}

void UcxTransport::link_recv(Op* op) {
  Peer& peer = peers_[static_cast<size_t>(op->peer)];
  op->prev = nullptr;
  op->next = peer.recvs;
  if (peer.recvs != nullptr) peer.recvs->prev = op;
  peer.recvs = op;
}

void UcxTransport::unlink_recv(Op* op) {
  Peer& peer = peers_[static_cast<size_t>(op->peer)];
  if (op->prev != nullptr) {
    op->prev->next = op->next;
  } else {
    peer.recvs = op->next;
  }
  if (op->next != nullptr) op->next->prev = op->prev;
  op->prev = op->next = nullptr;
}

void UcxTransport::on_send_done(void* request, ucs_status_t status, void* /*user_data*/) {
  Op* op = static_cast<Op*>(request);
  UcxTransport* self = op->owner;
  self->defer(op->done, op->context, status_from_ucs(status, status == UCS_OK ? op->length : 0));
  self->ops_->put(op);
}

void UcxTransport::on_recv_done(void* request, ucs_status_t status, const ucp_tag_recv_info_t* info,
                                void* /*user_data*/) {
  Op* op = static_cast<Op*>(request);
  UcxTransport* self = op->owner;
  self->unlink_recv(op);
  const size_t length = (info != nullptr && status == UCS_OK) ? info->length : 0;
  if (status == UCS_ERR_CANCELED && op->cancelled) {
    self->defer(op->done, op->context, Status{false, Errc::cancelled, 0});
  } else {
    self->defer(op->done, op->context, status_from_ucs(status, length));
  }
  self->ops_->put(op);
}

// Runs inside ucp_worker_progress: only records the failure; progress()
// cancels the peer's receives and closes its endpoint afterwards.
void UcxTransport::on_ep_error(void* arg, ucp_ep_h /*ep*/, ucs_status_t /*status*/) {
  Peer* peer = static_cast<Peer*>(arg);
  peer->failed = true;
  peer->owner->failures_pending_ = true;
}

void UcxTransport::send(int peer, Tag tag, const void* data, size_t length, CompletionFn done,
                        void* context) {
  check_peer(peer, "send");
  check_tag(tag, "send", rank_);
  Peer& target = peers_[static_cast<size_t>(peer)];
  if (target.failed || target.ep == nullptr) {
    done(context, status_from_ucs(UCS_ERR_CONNECTION_RESET, 0));
    return;
  }
  Op* op = ops_->get();
  op->owner = this;
  op->kind = OpKind::send;
  op->peer = peer;
  op->done = done;
  op->context = context;
  op->length = length;
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_REQUEST | UCP_OP_ATTR_FIELD_CALLBACK;
  param.request = op;
  param.cb.send = &UcxTransport::on_send_done;
  ucs_status_ptr_t result = ucp_tag_send_nbx(target.ep, data, length, wire_tag(rank_, tag), &param);
  if (UCS_PTR_IS_PTR(result) && result != nullptr) return;  // on_send_done will run
  ops_->put(op);
  const ucs_status_t status = UCS_PTR_STATUS(result);
  done(context, status_from_ucs(status, status == UCS_OK ? length : 0));
}

void UcxTransport::recv(int peer, Tag tag, void* data, size_t capacity, CompletionFn done,
                        void* context) {
  check_peer(peer, "recv");
  check_tag(tag, "recv", rank_);
  Op* op = ops_->get();
  op->owner = this;
  op->kind = OpKind::recv;
  op->peer = peer;
  op->done = done;
  op->context = context;
  ucp_tag_recv_info_t info{};
  ucp_request_param_t param{};
  // NO_IMM_CMPL: seen with UCX 1.13, a receive that matched an already
  // arrived message completed immediately with recv_info's length left 0, so
  // a 1-byte bcast looked like a 0-byte one. Through the callback the length
  // is always right.
  param.op_attr_mask = UCP_OP_ATTR_FIELD_REQUEST | UCP_OP_ATTR_FIELD_CALLBACK |
                       UCP_OP_ATTR_FIELD_RECV_INFO | UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
  param.request = op;
  param.cb.recv = &UcxTransport::on_recv_done;
  param.recv_info.tag_info = &info;
  ucs_status_ptr_t result =
      ucp_tag_recv_nbx(worker_.get(), data, capacity, wire_tag(peer, tag), kAllBits, &param);
  if (UCS_PTR_IS_PTR(result) && result != nullptr) {
    link_recv(op);
    // A message the peer sent before it failed is still received above (it
    // matched at once); anything else from a failed peer will never come.
    if (peers_[static_cast<size_t>(peer)].failed) ucp_request_cancel(worker_.get(), op);
    return;
  }
  ops_->put(op);
  const ucs_status_t status = UCS_PTR_STATUS(result);
  done(context, status_from_ucs(status, status == UCS_OK ? info.length : 0));
}

// A receive no message matched yet is stopped at once (ucp_request_cancel
// runs on_recv_done, which only records the completion for progress()). A
// matched one (a rendezvous under way) completes when its data is in; a
// send cannot be stopped at all in UCX 1.13 (ucp_request_cancel handles tag
// receives only): an eager one completes on its own, a rendezvous one when
// its receiver takes it. For those the caller's last resort is fail_peer,
// handled like a failure UCX reported: the peer's receives are cancelled
// and its endpoint force-closed, which fails the sends queued on it.
void UcxTransport::cancel(int peer, Tag /*tag*/, void* context, CancelMode mode) {
  check_peer(peer, "cancel");
  Peer& target = peers_[static_cast<size_t>(peer)];
  if (mode == CancelMode::fail_peer) {
    if (!target.failed) {
      target.failed = true;
      failures_pending_ = true;
    }
    return;
  }
  for (Op* op = target.recvs; op != nullptr; op = op->next) {
    if (op->context != context) continue;
    op->cancelled = true;
    ucp_request_cancel(worker_.get(), op);
    return;
  }
}

std::optional<Transport::Probe> UcxTransport::probe(int peer, Tag tag, Tag mask) {
  if (peer >= 0) check_peer(peer, "probe");
  mask &= tag::kTagMask;
  Tag wire = tag & mask;
  Tag wire_mask = mask;
  if (peer >= 0) {
    wire = wire_tag(peer, wire);
    wire_mask |= kSourceMask;
  }
  ucp_tag_recv_info_t info{};
  ucp_tag_message_h message = ucp_tag_probe_nb(worker_.get(), wire, wire_mask, 0, &info);
  if (message == nullptr) return std::nullopt;
  return Probe{static_cast<int>(info.sender_tag >> tag::kTagBits), info.sender_tag & tag::kTagMask,
               info.length};
}

// Cancels the receives posted to each newly failed peer (they complete with
// peer_failed) and force-closes its endpoint. Sends in flight to it are
// failed by UCX itself.
bool UcxTransport::handle_failures() {
  failures_pending_ = false;
  bool any = false;
  for (Peer& peer : peers_) {
    if (!peer.failed || peer.failure_handled) continue;
    peer.failure_handled = true;
    any = true;
    for (Op* op = peer.recvs; op != nullptr;) {
      Op* next = op->next;
      ucp_request_cancel(worker_.get(), op);
      op = next;
    }
    close_endpoint(peer);
  }
  return any;
}

bool UcxTransport::run_completions() {
  bool any = false;
  while (completions_head_ < completions_.size()) {
    const Completion c = completions_[completions_head_++];
    any = true;
    c.done(c.context, c.status);
  }
  completions_.clear();
  completions_head_ = 0;
  return any;
}

bool UcxTransport::progress() {
  bool any = false;
  for (int round = 0; round < kMaxProgressRounds; ++round) {
    if (ucp_worker_progress(worker_.get()) == 0) break;
    any = true;
    // Hand a completion, arrival or failure to user code at once: the caller
    // is likely waiting for exactly that, and one more ucp_worker_progress
    // would mostly find nothing (a few hundred instructions). Whatever else
    // UCP holds is found by the caller's next progress().
    if (completions_head_ < completions_.size() || arrivals_head_ < arrivals_.size() ||
        failures_pending_) {
      break;
    }
  }
  if (failures_pending_) any |= handle_failures();
  any |= run_completions();
  if (held_ready_) any |= run_held();
  any |= run_arrivals();
  return any;
}

void UcxTransport::block(int extra_fd, std::chrono::microseconds max) {
  // Work already recorded: the caller must progress, not sleep.
  if (completions_head_ < completions_.size() || failures_pending_ || held_ready_) return;
  if (arrivals_head_ < arrivals_.size()) {
    const AmArrival& front = arrivals_[arrivals_head_];
    // Sleep only while the front is a rendezvous whose data is still on its way.
    if (!front.rndv || !front.started || front.buffer->ready) return;
  }
  const ucs_status_t status = ucp_worker_arm(worker_.get());
  if (status == UCS_ERR_BUSY) return;  // events arrived since the last progress
  if (status != UCS_OK) {
    throw Error(Errc::transport, fmt::format("ucx: rank {}: ucp_worker_arm failed: {}", rank_,
                                             ucs_status_string(status)));
  }
  if (max.count() < 0) max = std::chrono::microseconds(0);
  pollfd fds[2] = {{efd_, POLLIN, 0}, {extra_fd, POLLIN, 0}};
  const nfds_t count = extra_fd >= 0 ? 2 : 1;
  timespec timeout{};
  timeout.tv_sec = static_cast<time_t>(max.count() / 1000000);
  timeout.tv_nsec = static_cast<long>((max.count() % 1000000) * 1000);
  // EINTR or a timeout: return early, which the contract allows.
  ::ppoll(fds, count, &timeout, nullptr);
}

double UcxTransport::now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace grove::ucx
