// UcxTransport set-up and tear-down: context, worker, address exchange,
// endpoints, and a bounded close.

#include "transport/ucx/ucx_transport.hpp"

#include <poll.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "core/params.hpp"
#include "transport/ucx/ucx_transport_impl.hpp"

namespace grove {
namespace {

std::string check_tls(std::string_view value) {
  for (char c : value) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == ',' ||
                    c == '^' || c == ':';
    if (!ok) return "a UCX transport list such as 'shm,self' or '^tcp' (letters, digits, _ , ^ :)";
  }
  return {};
}

const params::StringParam ucx_tls{
    "ucx_tls", "",
    "UCX transports to use, passed as UCX_TLS (e.g. 'shm,self', 'tcp'); empty: UCX's choice",
    check_tls};
const params::IntParam ucx_keepalive_ms{
    "ucx_keepalive_ms", 1000, 10, 3600000,
    "UCX keepalive interval (ms): bounds how long a dead peer goes unnoticed"};
const params::IntParam ucx_close_timeout_ms{
    "ucx_close_timeout_ms", 2000, 0, 600000,
    "how long closing the UCX endpoints may wait for in-flight messages (ms)"};

// Whether a UCX_TLS value can select posix or sysv (UCX warns about unused
// variables otherwise).
bool may_use_shared_memory(const std::string& tls) {
  if (tls.empty() || tls.front() == '^') return true;
  for (const char* name : {"all", "sm", "shm", "posix", "sysv"}) {
    size_t at = 0;
    while ((at = tls.find(name, at)) != std::string::npos) {
      const size_t end = at + std::strlen(name);
      const bool starts = at == 0 || tls[at - 1] == ',';
      const bool ends = end == tls.size() || tls[end] == ',' || tls[end] == ':';
      if (starts && ends) return true;
      at = end;
    }
  }
  return false;
}

[[noreturn]] void fail(int rank, std::string_view step, ucs_status_t status) {
  throw Error(Errc::transport,
              fmt::format("ucx: rank {}: {} failed: {}", rank, step, ucs_status_string(status)));
}

}  // namespace

std::unique_ptr<Transport> make_ucx_transport(PeerExchange& exchange) {
  return std::make_unique<ucx::UcxTransport>(exchange);
}

namespace ucx {

UcxTransport::UcxTransport(PeerExchange& exchange)
    : rank_(exchange.rank()), size_(exchange.size()) {
  if (size_ < 1 || size_ > (1 << tag::kSourceBits) || rank_ < 0 || rank_ >= size_) {
    throw Error(Errc::invalid_argument,
                fmt::format("ucx: rank {} of size {}: the UCX transport needs 0 <= rank < size "
                            "<= {} (the source rank travels in {} tag bits)",
                            rank_, size_, 1 << tag::kSourceBits, tag::kSourceBits));
  }
  create_context();
  create_worker();
  ops_ = std::make_unique<OpPool>(ucp_request_size_);
  completions_.reserve(256);
  arrivals_.reserve(64);
  register_am_dispatch();
  connect(exchange);
}

void UcxTransport::create_context() {
  // UCX 1.13's shared-memory transports (posix, sysv) claim peer-failure
  // support only with UCX_{POSIX,SYSV}_ERROR_HANDLING=y (default n); without
  // it, endpoints in peer error-handling mode skip them and intra-node traffic
  // goes over TCP loopback. ucp_config_modify does not reach these UCT
  // settings in 1.13 (it warns "invalid configuration"), so they go into the
  // environment, read when the worker opens its interfaces. A value the user
  // set wins (overwrite = 0).
  if (may_use_shared_memory(ucx_tls.get())) {
    ::setenv("UCX_POSIX_ERROR_HANDLING", "y", 0);
    ::setenv("UCX_SYSV_ERROR_HANDLING", "y", 0);
  }

  ucp_config_t* config = nullptr;
  ucs_status_t status = ucp_config_read(nullptr, nullptr, &config);
  if (status != UCS_OK) fail(rank_, "ucp_config_read", status);
  std::unique_ptr<ucp_config_t, void (*)(ucp_config_t*)> guard(config, ucp_config_release);

  auto modify = [&](const char* name, const std::string& value) {
    ucs_status_t s = ucp_config_modify(config, name, value.c_str());
    if (s != UCS_OK) {
      throw Error(Errc::invalid_parameter, fmt::format("ucx: rank {}: UCX rejected {}={}: {}",
                                                       rank_, name, value, ucs_status_string(s)));
    }
  };
  if (!ucx_tls.get().empty()) modify("TLS", ucx_tls.get());
  // A UCX_* variable set by the user wins over grove's defaults below.
  if (std::getenv("UCX_KEEPALIVE_INTERVAL") == nullptr) {
    modify("KEEPALIVE_INTERVAL", fmt::format("{}ms", ucx_keepalive_ms.get()));
  }
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_ESTIMATED_NUM_EPS;
  params.features = UCP_FEATURE_TAG | UCP_FEATURE_AM | UCP_FEATURE_RMA | UCP_FEATURE_AMO32 |
                    UCP_FEATURE_AMO64 | UCP_FEATURE_WAKEUP;
  params.estimated_num_eps = static_cast<size_t>(size_);
  ucp_context_h context = nullptr;
  status = ucp_init(&params, config, &context);
  if (status != UCS_OK) fail(rank_, "ucp_init", status);
  context_.reset(context);

  ucp_context_attr_t attr{};
  attr.field_mask = UCP_ATTR_FIELD_REQUEST_SIZE;
  status = ucp_context_query(context_.get(), &attr);
  if (status != UCS_OK) fail(rank_, "ucp_context_query", status);
  ucp_request_size_ = attr.request_size;
}

void UcxTransport::create_worker() {
  ucp_worker_params_t params{};
  params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  params.thread_mode = UCS_THREAD_MODE_SINGLE;
  ucp_worker_h worker = nullptr;
  ucs_status_t status = ucp_worker_create(context_.get(), &params, &worker);
  if (status != UCS_OK) fail(rank_, "ucp_worker_create", status);
  worker_.reset(worker);
  status = ucp_worker_get_efd(worker_.get(), &efd_);
  if (status != UCS_OK) fail(rank_, "ucp_worker_get_efd", status);
}

// Endpoints are created eagerly, to every rank including this one: a peer
// failure is detected through an endpoint (error handler, keepalive), so a
// rank that only ever receives from a peer still needs one to learn that the
// peer died; and wire-up happens here rather than inside the first timed
// operation. The cost is one endpoint per rank, which is fine for the
// single-node jobs this backend targets first.
void UcxTransport::connect(PeerExchange& exchange) {
  ucp_address_t* address = nullptr;
  size_t address_length = 0;
  ucs_status_t status = ucp_worker_get_address(worker_.get(), &address, &address_length);
  if (status != UCS_OK) fail(rank_, "ucp_worker_get_address", status);
  const auto* first = reinterpret_cast<const std::byte*>(address);
  const std::vector<std::byte> mine(first, first + address_length);
  ucp_worker_release_address(worker_.get(), address);

  const std::vector<std::vector<std::byte>> all = exchange.allgather(mine);
  if (all.size() != static_cast<size_t>(size_)) {
    throw Error(
        Errc::bootstrap,
        fmt::format("ucx: rank {}: the peer exchange returned {} worker addresses for {} ranks",
                    rank_, all.size(), size_));
  }
  peers_.resize(static_cast<size_t>(size_));
  for (int r = 0; r < size_; ++r) {
    Peer& peer = peers_[static_cast<size_t>(r)];
    peer.owner = this;
    peer.rank = r;
    const std::vector<std::byte>& blob = all[static_cast<size_t>(r)];
    if (blob.empty()) {
      throw Error(Errc::bootstrap,
                  fmt::format("ucx: rank {}: rank {} published an empty worker address", rank_, r));
    }
    ucp_ep_params_t params{};
    params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                        UCP_EP_PARAM_FIELD_ERR_HANDLER;
    params.address = reinterpret_cast<const ucp_address_t*>(blob.data());
    params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    params.err_handler.cb = &UcxTransport::on_ep_error;
    params.err_handler.arg = &peer;
    status = ucp_ep_create(worker_.get(), &params, &peer.ep);
    if (status != UCS_OK) fail(rank_, fmt::format("ucp_ep_create to rank {}", r), status);
  }
}

void UcxTransport::check_peer(int peer, const char* operation) const {
  if (peer < 0 || peer >= size_) {
    throw Error(Errc::invalid_argument, fmt::format("ucx {}: rank {}: peer {} is not in [0, {})",
                                                    operation, rank_, peer, size_));
  }
}

void UcxTransport::on_close_done(void* request, ucs_status_t /*status*/, void* /*user_data*/) {
  Op* op = static_cast<Op*>(request);
  UcxTransport* self = op->owner;
  --self->closes_in_flight_;
  self->ops_->put(op);
}

// Force-closes one endpoint: UCX releases it at once and fails whatever is
// still queued on it (their completions run with peer_failed, or are dropped
// during destruction). Callers flush first when delivery matters.
void UcxTransport::close_endpoint(Peer& peer) {
  if (peer.ep == nullptr) return;
  Op* op = ops_->get();
  op->owner = this;
  op->kind = OpKind::close;
  op->peer = peer.rank;
  ucp_request_param_t param{};
  param.op_attr_mask =
      UCP_OP_ATTR_FIELD_REQUEST | UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_FLAGS;
  param.request = op;
  param.cb.send = &UcxTransport::on_close_done;
  param.flags = UCP_EP_CLOSE_FLAG_FORCE;
  ucs_status_ptr_t result = ucp_ep_close_nbx(peer.ep, &param);
  peer.ep = nullptr;
  if (UCS_PTR_IS_PTR(result) && result != nullptr) {
    ++closes_in_flight_;
  } else {
    ops_->put(op);
  }
}

// Progresses until every flush/close request has completed or `deadline`
// passes, sleeping on the worker's event fd when there is nothing to do.
void UcxTransport::drain_closes(std::chrono::steady_clock::time_point deadline) {
  while (closes_in_flight_ > 0 && std::chrono::steady_clock::now() < deadline) {
    if (ucp_worker_progress(worker_.get()) != 0) continue;
    if (ucp_worker_arm(worker_.get()) != UCS_OK) continue;
    pollfd fd{efd_, POLLIN, 0};
    ::poll(&fd, 1, 1);
  }
}

// Tear-down in two bounded steps. (1) Flush every live endpoint for at most
// ucx_close_timeout_ms: sends still in flight, rendezvous ones included (they
// need this rank's progress until the receiver has pulled the data), get the
// chance to finish. (2) Force-close every endpoint, which purges whatever the
// flush did not finish. UCX 1.13 aborts (an assertion in ucp_ep_destroy_base)
// if the worker is destroyed while an endpoint still has requests in
// progress, so step (2) is not optional.
void UcxTransport::close_endpoints() {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(ucx_close_timeout_ms.get());
  for (Peer& peer : peers_) {
    if (peer.ep == nullptr || peer.failed) continue;
    Op* op = ops_->get();
    op->owner = this;
    op->kind = OpKind::close;
    op->peer = peer.rank;
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_REQUEST | UCP_OP_ATTR_FIELD_CALLBACK;
    param.request = op;
    param.cb.send = &UcxTransport::on_close_done;
    ucs_status_ptr_t result = ucp_ep_flush_nbx(peer.ep, &param);
    if (UCS_PTR_IS_PTR(result) && result != nullptr) {
      ++closes_in_flight_;
    } else {
      ops_->put(op);
    }
  }
  drain_closes(deadline);
  for (Peer& peer : peers_)
    close_endpoint(peer);
  // Force-closing needs no peer, so this wait is short; it is bounded anyway.
  drain_closes(std::max(deadline, std::chrono::steady_clock::now()) + std::chrono::seconds(1));
  // Closing leaves UCX some deferred clean-up on the worker's callback queue.
  for (int round = 0; round < 64 && ucp_worker_progress(worker_.get()) != 0; ++round) {
  }
}

UcxTransport::~UcxTransport() {
  // Receives still posted belong to callers that are going away: cancel them
  // and drop their completions rather than call into freed contexts.
  for (Peer& peer : peers_) {
    for (Op* op = peer.recvs; op != nullptr;) {
      Op* next = op->next;
      ucp_request_cancel(worker_.get(), op);
      op = next;
    }
  }
  drop_arrivals();
  close_endpoints();
  completions_.clear();
  completions_head_ = 0;
  worker_.reset();
  context_.reset();
}

}  // namespace ucx
}  // namespace grove
