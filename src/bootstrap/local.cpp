// The `local` bootstrap: a rank's connection to the `grove run` launcher.
//
// One Unix stream socket per rank, open for the whole job. The socket is
// non-blocking; every wait is a poll() bounded by a deadline, so a dead or
// hung launcher is reported instead of waited on forever.

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "bootstrap/backends.hpp"
#include "bootstrap/job_env.hpp"
#include "bootstrap/wire.hpp"
#include "core/timeouts.hpp"
#include "grove/error.hpp"

namespace grove {
namespace {

using Clock = std::chrono::steady_clock;

// The launcher fails a collective that is incomplete timeout_ms after its
// first contribution and names the missing ranks. A rank waits a little
// longer than that, so the launcher's better message normally arrives first,
// and still gives up on its own if the launcher is gone or stuck.
Clock::time_point collective_deadline() {
  const int64_t timeout = timeout_ms();
  return Clock::now() + std::chrono::milliseconds(timeout + std::min<int64_t>(timeout, 1000));
}

std::string errno_text(int err) {
  return std::strerror(err);
}

// Every rank on this host, unless `grove run --hosts K` says to pretend K
// hosts (rank r on "host<r * K / size>"; a testing aid, job_env::kHosts).
Hosts placed_hosts(int size) {
  const char* text = std::getenv(job_env::kHosts);
  const int k = text != nullptr ? std::atoi(text) : 0;
  if (k <= 0 || k > size) return one_host(size);
  std::vector<std::string> names;
  for (int r = 0; r < size; ++r)
    names.push_back(fmt::format("host{}", static_cast<int64_t>(r) * k / size));
  return Hosts::from_names(names);
}

class LocalBootstrap final : public Bootstrap {
 public:
  LocalBootstrap(int rank, int size, const std::string& socket_path, const std::string& key)
      : rank_(rank), size_(size), hosts_(placed_hosts(size)), reader_(wire::kMaxPayload) {
    // The launcher may close a connection before reading its hello (it makes
    // room when flooded by connections that never introduce themselves, and
    // closes any that is slow to): then the rank connects again, until
    // timeout_ms. A refusal is an answer and ends the attempt.
    const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms());
    for (;;) {
      connect_to(socket_path, deadline);
      try {
        if (handshake(key, deadline)) return;
      } catch (...) {
        ::close(fd_);
        throw;
      }
      ::close(fd_);
      fd_ = -1;
      closed_ = false;
      reader_ = wire::FrameReader(wire::kMaxPayload);
      if (Clock::now() >= deadline) {
        throw Error(Errc::timeout,
                    fmt::format("bootstrap rank {}: the launcher closed every connection before "
                                "answering its hello within timeout_ms = {} ms",
                                rank_, timeout_ms()));
      }
      ::poll(nullptr, 0, 10);
    }
  }
  ~LocalBootstrap() override { ::close(fd_); }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override { return "local"; }
  int job_cores() const override {
    const char* cores = std::getenv(job_env::kCores);
    const int n = cores != nullptr ? std::atoi(cores) : 0;
    return n > 0 ? n : 0;
  }
  // `grove run` starts every rank on its own host.
  const Hosts& hosts() const override { return hosts_; }

  std::vector<Blob> allgather(std::span<const std::byte> mine) override {
    auto reply = collective(wire::FrameType::allgather_request, mine, "allgather");
    if (reply.blobs.size() != static_cast<size_t>(size_)) {
      throw Error(Errc::protocol,
                  fmt::format("bootstrap rank {}: allgather #{} reply has {} entries for {} ranks",
                              rank_, reply.seq, reply.blobs.size(), size_));
    }
    std::vector<Blob> out(reply.blobs.size());
    for (size_t i = 0; i < out.size(); ++i)
      if (reply.blobs[i]) out[i] = std::move(*reply.blobs[i]);
    return out;
  }

  void barrier() override {
    auto reply = collective(wire::FrameType::barrier_request, {}, "barrier");
    if (!reply.blobs.empty()) {
      throw Error(Errc::protocol,
                  fmt::format("bootstrap rank {}: barrier #{} reply carries {} blobs", rank_,
                              reply.seq, reply.blobs.size()));
    }
  }

  int notice_fd() const override { return fd_; }

  std::vector<FailureNotice> poll_notices() override {
    read_available("polling for failure notices");
    // Outside a collective only notices may arrive.
    if (auto frame = next_frame("polling for failure notices")) {
      throw Error(Errc::protocol,
                  fmt::format("bootstrap rank {}: unexpected {} frame from the launcher", rank_,
                              wire::frame_type_name(frame->type)));
    }
    // Once the launcher is gone the descriptor stays readable (end of
    // stream): say so rather than let a caller's poll loop spin.
    if (notices_.empty()) check_open("polling for failure notices");
    return std::exchange(notices_, {});
  }

 private:
  void connect_to(const std::string& path, Clock::time_point deadline) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (path.empty() || path.size() >= sizeof(address.sun_path)) {
      throw Error(Errc::bootstrap,
                  fmt::format("bootstrap rank {}: rendezvous path '{}' is empty or longer than {} "
                              "bytes",
                              rank_, path, sizeof(address.sun_path) - 1));
    }
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd_ < 0) {
      throw Error(Errc::bootstrap,
                  fmt::format("bootstrap rank {}: socket(): {}", rank_, errno_text(errno)));
    }
    // A Unix-socket connect completes at once or fails (EAGAIN: the backlog
    // is full, retry until the deadline).
    while (::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
      const int err = errno;
      if ((err == EAGAIN || err == EINTR) && Clock::now() < deadline) {
        ::poll(nullptr, 0, 10);
        continue;
      }
      ::close(fd_);
      throw Error(Errc::bootstrap,
                  fmt::format("bootstrap rank {}: cannot connect to the launcher at '{}': {}",
                              rank_, path, errno_text(err)));
    }
  }

  // True when admitted; false when the launcher closed the connection
  // without answering (the caller connects again); throws on a refusal.
  bool handshake(const std::string& key, Clock::time_point deadline) {
    try {
      send_frame(wire::encode(wire::Hello{rank_, key}), deadline, "introducing itself");
    } catch (const Error&) {
      if (closed_) return false;
      throw;
    }
    std::optional<wire::Frame> answer;
    while (!(answer = next_frame("waiting to be admitted"))) {
      if (closed_) return false;
      wait_for(POLLIN, deadline, "waiting to be admitted");
      read_available("waiting to be admitted");
    }
    const wire::Frame& frame = *answer;
    if (frame.type == wire::FrameType::refuse) {
      throw Error(Errc::bootstrap,
                  fmt::format("bootstrap rank {}: the launcher refused the connection: {}", rank_,
                              wire::decode_refuse(frame).reason));
    }
    const wire::Welcome welcome = wire::decode_welcome(frame);
    if (welcome.rank != rank_ || welcome.size != size_) {
      throw Error(Errc::bootstrap,
                  fmt::format("bootstrap rank {}: the launcher admitted rank {} of {}, but the "
                              "environment says rank {} of {}",
                              rank_, welcome.rank, welcome.size, rank_, size_));
    }
    return true;
  }

  wire::CollectiveReply collective(wire::FrameType type, std::span<const std::byte> mine,
                                   std::string_view what) {
    const uint64_t seq = ++seq_;
    const std::string doing = fmt::format("{} #{}", what, seq);
    const auto deadline = collective_deadline();
    send_frame(wire::encode(wire::CollectiveRequest{seq, Blob(mine.begin(), mine.end())}, type),
               deadline, doing);
    const wire::Frame frame = receive_frame(deadline, doing);
    if (frame.type == wire::FrameType::collective_error) {
      const auto error = wire::decode_collective_error(frame);
      check_seq(error.seq, seq, doing);
      throw Error(error.code,
                  fmt::format("bootstrap rank {}: {} failed: {}", rank_, doing, error.message));
    }
    auto reply = wire::decode_collective_reply(frame);
    check_seq(reply.seq, seq, doing);
    return reply;
  }

  void check_seq(uint64_t got, uint64_t want, std::string_view doing) const {
    if (got != want) {
      throw Error(Errc::protocol, fmt::format("bootstrap rank {}: {} got the launcher's answer "
                                              "to collective #{}",
                                              rank_, doing, got));
    }
  }

  void send_frame(const wire::Frame& frame, Clock::time_point deadline, std::string_view doing) {
    check_open(doing);
    const std::vector<std::byte> bytes = wire::encode_frame(frame);
    size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n > 0) {
        sent += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) {
        wait_for(POLLOUT, deadline, doing);
        continue;
      }
      closed_ = true;
      throw Error(Errc::bootstrap, fmt::format("bootstrap rank {}: lost the launcher while {}: {}",
                                               rank_, doing, errno_text(errno)));
    }
  }

  // The next frame that is not a notice; notices are queued for poll_notices().
  wire::Frame receive_frame(Clock::time_point deadline, std::string_view doing) {
    for (;;) {
      if (auto frame = next_frame(doing)) return std::move(*frame);
      check_open(doing);
      wait_for(POLLIN, deadline, doing);
      read_available(doing);
    }
  }

  std::optional<wire::Frame> next_frame(std::string_view doing) {
    for (;;) {
      std::optional<wire::Frame> frame;
      try {
        frame = reader_.next();
      } catch (const Error& e) {
        throw Error(Errc::protocol,
                    fmt::format("bootstrap rank {}: {} while {}", rank_, e.what(), doing));
      }
      if (!frame || frame->type != wire::FrameType::notice) return frame;
      notices_.push_back(wire::decode_notice(*frame));
    }
  }

  // Reads whatever the socket holds without blocking; notes end of stream.
  void read_available(std::string_view doing) {
    std::byte chunk[64 * 1024];
    while (!closed_) {
      const ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
      if (n > 0) {
        reader_.feed(std::span(chunk, static_cast<size_t>(n)));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) return;
      // A launcher that closed the connection with our bytes unread resets
      // it: the same end of stream.
      if (n < 0 && errno != ECONNRESET) {
        throw Error(Errc::bootstrap, fmt::format("bootstrap rank {}: reading from the launcher "
                                                 "while {}: {}",
                                                 rank_, doing, errno_text(errno)));
      }
      closed_ = true;
    }
  }

  void check_open(std::string_view doing) const {
    if (closed_) {
      throw Error(Errc::bootstrap,
                  fmt::format("bootstrap rank {}: the launcher closed the connection while {} "
                              "(refused, or grove run has exited)",
                              rank_, doing));
    }
  }

  void wait_for(short events, Clock::time_point deadline, std::string_view doing) {
    for (;;) {
      pollfd p{fd_, events, 0};
      const int n = ::poll(&p, 1, poll_ms_until(deadline));
      if (n > 0) return;
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        throw Error(Errc::bootstrap,
                    fmt::format("bootstrap rank {}: poll(): {}", rank_, errno_text(errno)));
      }
      throw Error(Errc::timeout,
                  fmt::format("bootstrap rank {}: no answer from the launcher within the "
                              "timeout (timeout_ms = {}) while {}",
                              rank_, timeout_ms(), doing));
    }
  }

  int rank_;
  int size_;
  Hosts hosts_;
  int fd_ = -1;
  bool closed_ = false;  // the launcher closed its end (or the connection broke)
  uint64_t seq_ = 0;     // number of the last collective this rank started
  wire::FrameReader reader_;
  std::vector<FailureNotice> notices_;  // received, not yet returned by poll_notices()
};

}  // namespace

std::unique_ptr<Bootstrap> make_local_bootstrap(int rank, int size, const std::string& socket_path,
                                                const std::string& key) {
  return std::make_unique<LocalBootstrap>(rank, size, socket_path, key);
}

}  // namespace grove
