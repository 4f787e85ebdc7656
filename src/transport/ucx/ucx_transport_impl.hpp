#pragma once
// UcxTransport: the class behind make_ucx_transport (internal to the backend).
//
// Invariants that the rest of the backend relies on:
// - No user code (CompletionFn, AmHandler) ever runs inside a UCP callback.
//   UCP callbacks only record what happened (completions_, arrivals_,
//   Peer::failed); progress() hands those to user code after
//   ucp_worker_progress has returned. So user code may post, progress or
//   register handlers freely, and an Op put back to the pool inside a UCP
//   callback is never reposted before that callback returns.
// - The 64-bit UCP tag is (source rank << 44) | transport tag. Receives name
//   their peer with an all-ones mask, so matching is by (source, tag) exactly
//   and UCP's per-pair ordering gives the non-overtaking rule.
// - Every posted receive is linked into its peer's list until its UCP
//   callback runs; a peer failure cancels exactly that list, and cancel()
//   finds a receive there by its completion context.

#include <ucp/api/ucp.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "transport/factory.hpp"
#include "transport/transport.hpp"
#include "transport/ucx/ucx_op_pool.hpp"

namespace grove::ucx {

// Bytes of one active message in flight (send side) or received through
// rendezvous or held for a handler not registered yet (receive side).
struct AmBuffer {
  std::vector<std::byte> bytes;
  bool ready = false;   // receive: the bytes are all here
  bool failed = false;  // receive: the rendezvous failed; the message is dropped
};

// The AM header, sent with every active message.
struct AmHeader {
  uint32_t source;
  uint16_t id;
  uint16_t reserved;
};

// An active message received and not yet handed to its handler.
struct AmArrival {
  int source = -1;
  uint16_t id = 0;
  size_t length = 0;
  void* desc = nullptr;             // UCP data kept with UCS_INPROGRESS; release after use
  const std::byte* data = nullptr;  // the payload when it is in `desc`
  AmBuffer* buffer = nullptr;       // the payload when it is ours (rendezvous or held)
  bool rndv = false;                // `desc` is a rendezvous descriptor
  bool started = false;             // rendezvous: ucp_am_recv_data_nbx posted
};

class UcxTransport final : public Transport {
 public:
  explicit UcxTransport(PeerExchange& exchange);
  ~UcxTransport() override;
  UcxTransport(const UcxTransport&) = delete;
  UcxTransport& operator=(const UcxTransport&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override { return "ucx"; }

  void send(int peer, Tag tag, const void* data, size_t length, CompletionFn done,
            void* context) override;
  void recv(int peer, Tag tag, void* data, size_t capacity, CompletionFn done,
            void* context) override;
  void cancel(int peer, Tag tag, void* context, CancelMode mode) override;
  std::optional<Probe> probe(int peer, Tag tag, Tag mask) override;

  void set_am_handler(uint16_t id, AmHandler handler) override;
  void am_send(int peer, uint16_t id, std::span<const std::byte> payload) override;

  bool progress() override;
  void block(int extra_fd, std::chrono::microseconds max) override;
  double now() const override;

  // ucx_rma.cpp: one-sided access.
  bool supports_rma() const override { return true; }
  std::unique_ptr<RmaRegion> rma_allocate(size_t bytes) override;
  std::unique_ptr<RmaTarget> rma_attach(int peer, std::span<const std::byte> key) override;
  void rma_put(RmaTarget& target, size_t offset, const void* data, size_t length, CompletionFn done,
               void* context) override;
  void rma_get(RmaTarget& target, size_t offset, void* data, size_t length, CompletionFn done,
               void* context) override;
  void rma_atomic(RmaTarget& target, size_t offset, const RmaAtomic& atomic, CompletionFn done,
                  void* context) override;
  void rma_flush(int peer, CompletionFn done, void* context) override;
  void rma_fence() override;

 private:
  struct Peer {
    UcxTransport* owner = nullptr;
    int rank = -1;
    ucp_ep_h ep = nullptr;
    bool failed = false;  // set by the endpoint error handler
    bool failure_handled = false;
    Op* recvs = nullptr;  // head of the posted-receive list
  };
  struct Completion {
    CompletionFn done;
    void* context;
    Status status;
  };
  struct ContextDeleter {
    void operator()(ucp_context* c) const { ucp_cleanup(c); }
  };
  struct WorkerDeleter {
    void operator()(ucp_worker* w) const { ucp_worker_destroy(w); }
  };

  // ucx_transport.cpp: setup and teardown.
  void create_context();
  void create_worker();
  void connect(PeerExchange& exchange);
  void close_endpoints();
  void close_endpoint(Peer& peer);
  void drain_closes(std::chrono::steady_clock::time_point deadline);
  static void on_close_done(void* request, ucs_status_t status, void* user_data);
  void check_peer(int peer, const char* operation) const;

  // ucx_tagged.cpp: tagged messages and failures.
  static void on_send_done(void* request, ucs_status_t status, void* user_data);
  static void on_recv_done(void* request, ucs_status_t status, const ucp_tag_recv_info_t* info,
                           void* user_data);
  static void on_ep_error(void* arg, ucp_ep_h ep, ucs_status_t status);
  void link_recv(Op* op);
  void unlink_recv(Op* op);
  void defer(CompletionFn done, void* context, const Status& status);
  bool run_completions();
  bool handle_failures();

  // ucx_rma.cpp: one-sided access.
  static void on_rma_done(void* request, ucs_status_t status, void* user_data);
  static void on_rma_fetch_done(void* request, ucs_status_t status, void* user_data);
  static void copy_fetched(Op* op);
  // The endpoint of a target's peer, or null (after calling `done` with
  // peer_failed) when that peer has failed.
  ucp_ep_h rma_endpoint(int peer, CompletionFn done, void* context);
  void finish_rma(ucs_status_ptr_t result, Op* op);

  // ucx_am.cpp: active messages.
  static ucs_status_t on_am(void* arg, const void* header, size_t header_length, void* data,
                            size_t length, const ucp_am_recv_param_t* param);
  static void on_am_send_done(void* request, ucs_status_t status, void* user_data);
  static void on_am_recv_done(void* request, ucs_status_t status, size_t length, void* user_data);
  void register_am_dispatch();
  AmBuffer* take_am_buffer(size_t length);
  void give_am_buffer(AmBuffer* buffer);
  void start_rendezvous(AmArrival& arrival);
  bool run_arrivals();
  bool run_held();
  void deliver(AmArrival arrival);
  void hold(AmArrival arrival);
  void release_arrival(AmArrival& arrival);
  void drop_arrivals();

  int rank_ = -1;
  int size_ = 0;
  // Declared before the worker so they are destroyed after it: UCP holds
  // pointers into both until the worker is gone.
  std::unique_ptr<OpPool> ops_;
  std::vector<Peer> peers_;  // sized once; UCP holds pointers to its elements
  std::vector<std::unique_ptr<AmBuffer>> am_buffers_;
  std::unique_ptr<ucp_context, ContextDeleter> context_;
  std::unique_ptr<ucp_worker, WorkerDeleter> worker_;
  int efd_ = -1;
  size_t ucp_request_size_ = 0;

  // Completions recorded by UCP callbacks, run by progress(). A member index
  // so a completion that calls progress() again continues the same queue.
  std::vector<Completion> completions_;
  size_t completions_head_ = 0;
  bool failures_pending_ = false;

  // Active messages: arrivals in arrival order (a rendezvous not yet complete
  // holds back everything behind it, which keeps per-pair order), messages
  // held because no handler was registered for their id yet (delivered in
  // order once one is), and pooled buffers.
  std::unordered_map<uint16_t, std::unique_ptr<AmHandler>> handlers_;
  std::vector<std::unique_ptr<AmHandler>> retired_handlers_;  // replaced while running
  std::vector<AmArrival> arrivals_;
  size_t arrivals_head_ = 0;
  std::vector<AmArrival> held_;
  bool held_ready_ = false;  // a handler was registered since held_ was last scanned
  int delivering_ = 0;       // depth of handler calls on the stack
  std::vector<AmBuffer*> free_am_buffers_;
  int closes_in_flight_ = 0;  // ucp_ep_close_nbx requests not completed yet
};

// Maps a UCP completion status to grove's.
Status status_from_ucs(ucs_status_t status, size_t length);

}  // namespace grove::ucx
