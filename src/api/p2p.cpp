// Comm's point-to-point messages: one transport send or receive each, in
// the tag space of transport/tag.hpp's point_to_point topology. A wildcard
// receive (any source or any tag) probes for a matching arrival whenever it
// is tested or waited on, then receives exactly that message.

#include <fmt/format.h>

#include "api/comm_state.hpp"
#include "api/pending.hpp"
#include "grove/comm.hpp"
#include "sched/executor.hpp"
#include "sched/wait.hpp"

namespace grove {
namespace detail {
namespace {

// Context, topology and (unless any) the user tag: the bits a probe compares.
Tag probe_mask(int tag) {
  return tag::kContextMask | tag::kTopologyMask | (tag == Comm::any_tag ? 0 : tag::kUserTagMask);
}

std::string describe_tag(int tag) {
  return tag == Comm::any_tag ? std::string("any tag") : fmt::format("tag {}", tag);
}

std::string describe_source(int source) {
  return source == Comm::any_source ? std::string("any rank") : fmt::format("{}", source);
}

}  // namespace

// A receive's completion may come after its operation is gone (a receive
// the transport could not stop): the transport's context is this record,
// which then frees itself.
struct P2pCompletion {
  bool done = false;
  bool orphaned = false;
  Status status;

  static void on_done(void* context, const Status& status) {
    auto* self = static_cast<P2pCompletion*>(context);
    if (self->orphaned) {
      delete self;
      return;
    }
    self->done = true;
    self->status = status;
  }
};

// Invariant: when a receive's wait() throws or its last handle is dropped,
// the receive was cancelled and the transport reported it (or, failing
// that, the peer's connection was failed), so nothing is written into the
// caller's buffer afterwards. A send's buffer is only read: a dropped or
// timed-out send is left to complete (UCX cannot stop a send), as an
// MPI_Request_free'd send would be.
class P2pOp final : public Pending {
 public:
  enum class Kind { send, recv };

  P2pOp(std::shared_ptr<CommState> comm, Kind kind, int peer, int tag, std::byte* data,
        size_t length)
      : comm_(std::move(comm)), kind_(kind), peer_(peer), tag_(tag), data_(data), length_(length) {}

  ~P2pOp() override {
    if (posted_ && !completion_->done && kind_ == Kind::recv) {
      try {
        (void)abandon(
            Error(Errc::cancelled, fmt::format("{}: dropped before it completed", what())));
      } catch (const std::exception&) {
        // Progress failed while cancelling: the completion record stays.
      }
    }
    if (posted_ && !completion_->done) {
      completion_->orphaned = true;  // frees itself when the transport reports
      completion_.release();
    }
  }

  void start() {
    if (kind_ == Kind::send) {
      post(peer_, tag_);
    } else if (peer_ != Comm::any_source && tag_ != Comm::any_tag) {
      post(peer_, tag_);
    } else {
      try_match();
    }
  }

  bool test() override {
    if (finished_) return true;
    comm_->transport->progress();
    if (!posted_) try_match();
    if (!done()) {
      comm_->session->poll_failures();
      return false;
    }
    finish();
    return true;
  }

  void wait() override {
    if (finished_) return;
    if (!done()) {
      const int notice_fd = comm_->session->bootstrap->notice_fd();
      try {
        sched::wait_until_described(
            *comm_->transport, notice_fd,
            [this] {
              if (!posted_) try_match();
              if (done()) return true;
              comm_->session->poll_failures(comm_->transport->now());
              return false;
            },
            [this] { return what(); });
      } catch (const Error& e) {
        finished_ = true;
        throw abandon(e);
      }
    }
    finish();
  }

  std::optional<MessageInfo> message() const override {
    if (kind_ != Kind::recv || !finished_ || !completion_->status.ok) return std::nullopt;
    return info_;
  }

 private:
  bool done() const { return completion_->done; }

  std::string what() const {
    return kind_ == Kind::send
               ? fmt::format("rank {}: send to {} ({}, {} B)", comm_->rank(), peer_,
                             describe_tag(tag_), length_)
               : fmt::format("rank {}: recv from {} ({}, {} B buffer)", comm_->rank(),
                             describe_source(peer_), describe_tag(tag_), length_);
  }

  void post(int peer, int tag) {
    posted_ = true;
    info_.source = peer;
    info_.tag = tag;
    wire_ = tag::make_p2p(comm_->context, static_cast<uint32_t>(tag));
    if (kind_ == Kind::send) {
      comm_->transport->send(peer, wire_, data_, length_, &P2pCompletion::on_done,
                             completion_.get());
    } else {
      comm_->transport->recv(peer, wire_, data_, length_, &P2pCompletion::on_done,
                             completion_.get());
    }
  }

  // A wildcard receive: the first matching arrival, received exactly.
  void try_match() {
    const Tag wire = tag::make_p2p(comm_->context, tag_ == Comm::any_tag ? 0u : tag_);
    const auto found = comm_->transport->probe(peer_, wire, probe_mask(tag_));
    if (found) post(found->source, static_cast<int>(tag::user_tag(found->tag)));
  }

  // Stops a posted receive as Execution::abort stops a schedule's: cancel,
  // wait for the report, then fail the peer's connection as the last resort.
  Error abandon(const Error& cause) {
    if (kind_ != Kind::recv || !posted_ || done()) return cause;
    Transport& transport = *comm_->transport;
    const auto reported = [this] { return done(); };
    transport.cancel(info_.source, wire_, completion_.get(), CancelMode::request);
    if (sched::await_cancelled(transport, reported)) return cause;
    transport.cancel(info_.source, wire_, completion_.get(), CancelMode::fail_peer);
    if (sched::await_cancelled(transport, reported)) return cause;
    return Error(cause.code(), fmt::format("{} (the receive could not be cancelled: its buffer "
                                           "stays in use until the transport completes it)",
                                           cause.what()));
  }

  void finish() {
    finished_ = true;
    const Status& status = completion_->status;
    info_.bytes = status.length;
    if (status.ok) return;
    std::string cause;
    switch (status.code) {
      case Errc::truncated:
        cause = fmt::format("a message from rank {} ({}) is longer than the {}-byte buffer",
                            info_.source, describe_tag(info_.tag), length_);
        break;
      case Errc::peer_failed:
        cause = fmt::format("rank {} departed", info_.source);
        break;
      default:
        cause = fmt::format("the transport reported {}", errc_name(status.code));
        break;
    }
    throw Error(status.code, fmt::format("{}: {}", what(), cause));
  }

  std::shared_ptr<CommState> comm_;
  Kind kind_;
  int peer_;
  int tag_;
  std::byte* data_;
  size_t length_;
  bool posted_ = false;
  bool finished_ = false;
  Tag wire_ = 0;
  MessageInfo info_;
  std::unique_ptr<P2pCompletion> completion_ = std::make_unique<P2pCompletion>();
};

namespace {

void check_peer(const CommState& comm, int peer, bool wildcard, const char* call) {
  if ((wildcard && peer == Comm::any_source) || (peer >= 0 && peer < comm.size())) return;
  throw Error(Errc::invalid_argument,
              fmt::format("rank {}: {}: rank {} is not in [0, {}){}", comm.rank(), call, peer,
                          comm.size(), wildcard ? " nor any_source" : ""));
}

void check_tag(const CommState& comm, int tag, bool wildcard, const char* call) {
  if ((wildcard && tag == Comm::any_tag) || (tag >= 0 && tag <= Comm::max_tag)) return;
  throw Error(Errc::invalid_argument,
              fmt::format("rank {}: {}: tag {} is not in [0, {}]{}", comm.rank(), call, tag,
                          Comm::max_tag, wildcard ? " nor any_tag" : ""));
}

std::shared_ptr<P2pOp> start_send(const std::shared_ptr<CommState>& comm,
                                  std::span<const std::byte> data, int dest, int tag,
                                  const char* call) {
  check_peer(*comm, dest, false, call);
  check_tag(*comm, tag, false, call);
  // The transport reads the bytes only.
  auto op = std::make_shared<P2pOp>(comm, P2pOp::Kind::send, dest, tag,
                                    const_cast<std::byte*>(data.data()), data.size());
  op->start();
  return op;
}

std::shared_ptr<P2pOp> start_recv(const std::shared_ptr<CommState>& comm,
                                  std::span<std::byte> buffer, int source, int tag,
                                  const char* call) {
  check_peer(*comm, source, true, call);
  check_tag(*comm, tag, true, call);
  auto op =
      std::make_shared<P2pOp>(comm, P2pOp::Kind::recv, source, tag, buffer.data(), buffer.size());
  op->start();
  return op;
}

std::optional<MessageInfo> probe_once(CommState& comm, int source, int tag) {
  const Tag wire = tag::make_p2p(comm.context, tag == Comm::any_tag ? 0u : tag);
  const auto found = comm.transport->probe(source, wire, probe_mask(tag));
  if (!found) return std::nullopt;
  return MessageInfo{found->source, static_cast<int>(tag::user_tag(found->tag)), found->length};
}

}  // namespace
}  // namespace detail

void Comm::send(std::span<const std::byte> data, int dest, int tag) {
  detail::start_send(state_, data, dest, tag, "send")->wait();
}

Request Comm::isend(std::span<const std::byte> data, int dest, int tag) {
  return Request(detail::start_send(state_, data, dest, tag, "isend"));
}

MessageInfo Comm::recv(std::span<std::byte> buffer, int source, int tag) {
  auto op = detail::start_recv(state_, buffer, source, tag, "recv");
  op->wait();
  return *op->message();
}

Request Comm::irecv(std::span<std::byte> buffer, int source, int tag) {
  return Request(detail::start_recv(state_, buffer, source, tag, "irecv"));
}

std::optional<MessageInfo> Comm::iprobe(int source, int tag) {
  detail::check_peer(*state_, source, true, "iprobe");
  detail::check_tag(*state_, tag, true, "iprobe");
  state_->transport->progress();
  return detail::probe_once(*state_, source, tag);
}

MessageInfo Comm::probe(int source, int tag) {
  detail::check_peer(*state_, source, true, "probe");
  detail::check_tag(*state_, tag, true, "probe");
  std::optional<MessageInfo> found = detail::probe_once(*state_, source, tag);
  if (found) return *found;
  sched::wait_until_described(
      *state_->transport, state_->session->bootstrap->notice_fd(),
      [&] {
        found = detail::probe_once(*state_, source, tag);
        if (found) return true;
        state_->session->poll_failures(state_->transport->now());
        return false;
      },
      [&] {
        return fmt::format("rank {}: probe for {} from {}", rank(), detail::describe_tag(tag),
                           detail::describe_source(source));
      });
  return *found;
}

void Comm::check_whole_elements(const MessageInfo& info, size_t element) const {
  if (element == 0 || info.bytes % element == 0) return;
  throw Error(Errc::mismatch,
              fmt::format("rank {}: recv from {} (tag {}): {} B is not a whole number of {}-byte "
                          "elements",
                          rank(), info.source, info.tag, info.bytes, element));
}

}  // namespace grove
