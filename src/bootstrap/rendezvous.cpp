#include "bootstrap/rendezvous.hpp"

#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include <fmt/format.h>

#include "bootstrap/job_identity.hpp"
#include "core/params.hpp"
#include "core/timeouts.hpp"

namespace grove::launch {
namespace {

// Strangers (connected, not admitted yet) held at once. Beyond this the
// longest-waiting one is evicted to make room, so a flood of connections can
// neither exhaust the launcher's descriptors nor lock the job's ranks out:
// a rank sends its hello as soon as it connects, and one evicted before it
// was read connects again (bootstrap/local.cpp). Admitted ranks do not count.
constexpr size_t kMaxStrangers = 256;

const params::IntParam hello_timeout_ms{
    "run_hello_timeout_ms", 2000, 1, 600000,
    "grove run: how long a new bootstrap connection may take to send its whole hello before it "
    "is closed (at most timeout_ms); a rank sends it as soon as it connects, in ms"};

void log(const std::string& line) {
  fmt::print(stderr, "grove run: {}\n", line);
}

std::string random_key() {
  unsigned char bytes[16];
  size_t got = 0;
  while (got < sizeof(bytes)) {
    const ssize_t n = ::getrandom(bytes + got, sizeof(bytes) - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      throw Error(Errc::internal,
                  fmt::format("grove run: no random bytes for the job key: {}", strerror(errno)));
    }
    got += static_cast<size_t>(n);
  }
  std::string key;
  for (unsigned char b : bytes)
    key += fmt::format("{:02x}", b);
  return key;
}

// Compares without an early exit, so the time taken says nothing about the key.
bool same_key(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i)
    diff |= static_cast<unsigned char>(a[i] ^ b[i % std::max<size_t>(b.size(), 1)]);
  return diff == 0;
}

// Writes as much of `out` as the socket takes now. False if the connection broke.
bool flush(int fd, std::vector<std::byte>& out) {
  size_t sent = 0;
  while (sent < out.size()) {
    const ssize_t n = ::send(fd, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && errno == EAGAIN) {
      break;
    } else {
      return false;
    }
  }
  out.erase(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(sent));
  return true;
}

enum class ReadResult { more_later, end_of_stream, error };

// Feeds everything readable now into `reader`.
ReadResult read_into(int fd, wire::FrameReader& reader) {
  std::byte chunk[64 * 1024];
  for (;;) {
    const ssize_t n = ::recv(fd, chunk, sizeof(chunk), 0);
    if (n > 0) {
      reader.feed(std::span(chunk, static_cast<size_t>(n)));
    } else if (n == 0) {
      return ReadResult::end_of_stream;
    } else if (errno == EINTR) {
      continue;
    } else if (errno == EAGAIN) {
      return ReadResult::more_later;
    } else {
      return ReadResult::error;
    }
  }
}

std::chrono::milliseconds timeout() {
  return std::chrono::milliseconds(timeout_ms());
}

std::chrono::milliseconds hello_timeout() {
  return std::chrono::milliseconds(std::min<int64_t>(hello_timeout_ms.get(), timeout_ms()));
}

std::string rank_list(const std::vector<int>& ranks) {
  std::string out;
  const size_t shown = std::min<size_t>(ranks.size(), 16);
  for (size_t i = 0; i < shown; ++i)
    out += (i ? ", " : "") + std::to_string(ranks[i]);
  if (ranks.size() > shown) out += fmt::format(" and {} more", ranks.size() - shown);
  return out;
}

}  // namespace

std::string run_directory_parent() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp && *tmp ? tmp : "/tmp";
}

Rendezvous::Rendezvous(int size, bool notify)
    : size_(size), notify_(notify), key_(random_key()), ranks_(static_cast<size_t>(size)) {
  // The name carries the launcher's identity: a later `grove run` removes
  // the directory if this launcher dies without doing so (job_identity.hpp).
  std::string pattern = fmt::format("{}/{}{}-XXXXXX", run_directory_parent(), job::kRunDirPrefix,
                                    job::self().token());
  // mkdtemp creates the directory with mode 0700: only this user reaches the socket.
  if (!::mkdtemp(pattern.data())) {
    throw Error(Errc::bootstrap,
                fmt::format("grove run: cannot create a private directory '{}': {}", pattern,
                            strerror(errno)));
  }
  dir_ = pattern;
  socket_path_ = dir_ + "/rendezvous";
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  auto fail = [&](const std::string& what) {
    const std::string message = fmt::format("grove run: {}: {}", what, strerror(errno));
    if (listen_fd_ >= 0) ::close(listen_fd_);
    ::unlink(socket_path_.c_str());
    ::rmdir(dir_.c_str());
    throw Error(Errc::bootstrap, message);
  };
  if (socket_path_.size() >= sizeof(address.sun_path)) {
    errno = ENAMETOOLONG;
    fail(fmt::format("rendezvous path '{}' (set a shorter TMPDIR)", socket_path_));
  }
  std::memcpy(address.sun_path, socket_path_.c_str(), socket_path_.size() + 1);
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) fail("socket()");
  if (::bind(listen_fd_, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
    fail(fmt::format("bind('{}')", socket_path_));
  }
  ::chmod(socket_path_.c_str(), 0600);
  if (::listen(listen_fd_, SOMAXCONN) != 0) fail("listen()");
}

Rendezvous::~Rendezvous() {
  for (auto& c : strangers_)
    ::close(c.fd);
  for (auto& r : ranks_)
    if (r.fd >= 0) ::close(r.fd);
  ::close(listen_fd_);
  ::unlink(socket_path_.c_str());
  ::rmdir(dir_.c_str());
}

std::vector<pollfd> Rendezvous::pollfds() const {
  std::vector<pollfd> out;
  out.push_back({listen_fd_, POLLIN, 0});
  for (const auto& c : strangers_)
    out.push_back({c.fd, static_cast<short>(c.out.empty() ? POLLIN : POLLIN | POLLOUT), 0});
  for (const auto& r : ranks_)
    if (r.fd >= 0)
      out.push_back({r.fd, static_cast<short>(r.out.empty() ? POLLIN : POLLIN | POLLOUT), 0});
  return out;
}

void Rendezvous::handle(const std::vector<pollfd>& ready) {
  std::unordered_map<int, short> events;
  for (const auto& p : ready)
    if (p.revents) events[p.fd] = p.revents;
  // Ranks first: admitting a stranger below moves its descriptor to a rank,
  // and its events must not be handled twice.
  for (int rank = 0; rank < size_; ++rank) {
    const int fd = ranks_[static_cast<size_t>(rank)].fd;
    if (fd < 0) continue;
    if (auto it = events.find(fd); it != events.end()) serve_rank(rank, it->second);
  }
  for (auto it = strangers_.begin(); it != strangers_.end();) {
    auto current = it++;
    auto ev = events.find(current->fd);
    if (ev != events.end()) serve_stranger(*current, ev->second);
    if (current->fd < 0) strangers_.erase(current);
  }
  if (events.count(listen_fd_)) accept_new();
}

void Rendezvous::accept_new() {
  for (;;) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN: none left; other errors: the peer gave up
    Connection c;
    c.fd = fd;
    c.deadline = Clock::now() + hello_timeout();
    // A rank's hello is normally there already: admit it before anything
    // else can push it out.
    serve_stranger(c, POLLIN);
    if (c.fd < 0) continue;
    if (strangers_.size() >= kMaxStrangers) {
      // The front is the longest waiting (connections are appended in
      // accept order).
      if (++evicted_ == 1) {
        log(
            fmt::format("more than {} bootstrap connections waiting to introduce themselves; "
                        "closing the longest-waiting ones (reported once)",
                        kMaxStrangers));
      }
      ::close(strangers_.front().fd);
      strangers_.pop_front();
    }
    strangers_.push_back(std::move(c));
  }
}

void Rendezvous::serve_stranger(Connection& c, short revents) {
  auto drop = [&c] {
    ::close(c.fd);
    c.fd = -1;
  };
  if ((revents & POLLOUT) && !flush(c.fd, c.out)) return drop();
  if (c.close_when_flushed) {
    if (c.out.empty()) drop();
    return;
  }
  if (!(revents & (POLLIN | POLLHUP | POLLERR))) return;
  const ReadResult result = read_into(c.fd, c.reader);
  try {
    if (auto frame = c.reader.next()) return admit(c, *frame);
  } catch (const Error& e) {
    log(fmt::format("refused a bootstrap connection: {}", e.what()));
    return drop();
  }
  // Hung up before a whole hello arrived: a probe, nothing to report.
  if (result != ReadResult::more_later) drop();
}

void Rendezvous::admit(Connection& c, const wire::Frame& frame) {
  const wire::Hello hello = wire::decode_hello(frame);  // throws on anything but a hello
  std::string reason;
  if (!same_key(hello.key, key_)) {
    reason = "wrong job key";
  } else if (hello.rank >= size_) {
    reason = fmt::format("rank {} is out of range (the job has {} ranks)", hello.rank, size_);
  } else if (ranks_[static_cast<size_t>(hello.rank)].departed) {
    reason = fmt::format("rank {} has already left the job", hello.rank);
  } else if (ranks_[static_cast<size_t>(hello.rank)].fd >= 0 ||
             ranks_[static_cast<size_t>(hello.rank)].closed_at) {
    reason = fmt::format("rank {} is already connected (a rank joins once per job)", hello.rank);
  }
  if (!reason.empty()) {
    log(fmt::format("refused a bootstrap connection claiming rank {}: {}", hello.rank, reason));
    c.out = wire::encode_frame(wire::encode(wire::Refuse{reason}));
    c.close_when_flushed = true;
    c.deadline = Clock::now() + hello_timeout();
    if (!flush(c.fd, c.out) || c.out.empty()) {
      ::close(c.fd);
      c.fd = -1;
    }
    return;
  }
  RankState& r = ranks_[static_cast<size_t>(hello.rank)];
  r.fd = c.fd;
  r.reader = std::move(c.reader);
  r.reader.set_max_payload(wire::kMaxPayload);
  c.fd = -1;
  send_to_rank(hello.rank, wire::encode(wire::Welcome{hello.rank, size_}));
  // A late joiner learns every departure so far before anything else.
  for (const auto& notice : notices_)
    send_to_rank(hello.rank, wire::encode(notice));
  // A hello may have been followed at once by a request.
  serve_rank(hello.rank, 0);
}

void Rendezvous::serve_rank(int rank, short revents) {
  RankState& r = ranks_[static_cast<size_t>(rank)];
  if ((revents & POLLOUT) && !flush(r.fd, r.out)) {
    return close_rank(rank);
  }
  bool ended = false;
  if (revents & (POLLIN | POLLHUP | POLLERR)) {
    ended = read_into(r.fd, r.reader) != ReadResult::more_later;
  }
  try {
    while (r.fd >= 0) {
      auto frame = r.reader.next();
      if (!frame) break;
      on_request(rank, *frame);
    }
  } catch (const Error& e) {
    log(fmt::format("rank {} sent malformed bootstrap data ({}); closing its connection", rank,
                    e.what()));
    return close_rank(rank);
  }
  if (ended && r.fd >= 0) close_rank(rank);
}

void Rendezvous::close_rank(int rank) {
  RankState& r = ranks_[static_cast<size_t>(rank)];
  if (r.fd < 0) return;
  ::close(r.fd);
  r.fd = -1;
  r.out.clear();
  r.closed_at = Clock::now();
}

std::vector<std::pair<int, Clock::time_point>> Rendezvous::closed_connections() const {
  std::vector<std::pair<int, Clock::time_point>> out;
  for (int rank = 0; rank < size_; ++rank) {
    const RankState& r = ranks_[static_cast<size_t>(rank)];
    if (r.closed_at && !r.departed) out.emplace_back(rank, *r.closed_at);
  }
  return out;
}

void Rendezvous::send_to_rank(int rank, const wire::Frame& frame) {
  RankState& r = ranks_[static_cast<size_t>(rank)];
  if (r.fd < 0) return;
  const bool was_idle = r.out.empty();
  wire::append_frame(r.out, frame.type, frame.payload);
  if (was_idle && !flush(r.fd, r.out)) close_rank(rank);
}

std::string Rendezvous::collective_name(const Collective& c) const {
  return fmt::format("{} #{}", c.type == wire::FrameType::barrier_request ? "barrier" : "allgather",
                     c.seq);
}

void Rendezvous::on_request(int rank, const wire::Frame& frame) {
  if (frame.type != wire::FrameType::allgather_request &&
      frame.type != wire::FrameType::barrier_request) {
    throw Error(Errc::protocol,
                fmt::format("unexpected {} frame", wire::frame_type_name(frame.type)));
  }
  wire::CollectiveRequest request = wire::decode_collective_request(frame);
  if (last_failure_ && request.seq == last_failure_->seq) {
    wire::CollectiveError late = *last_failure_;
    late.message += fmt::format(" (rank {} joined after it had failed)", rank);
    send_to_rank(rank, wire::encode(late));
    return;
  }
  const Collective probe{request.seq, frame.type, {}, {}, 0};
  if (request.seq != finished_seq_ + 1) {
    send_to_rank(rank, wire::encode(wire::CollectiveError{
                           request.seq, Errc::mismatch,
                           fmt::format("rank {} started bootstrap {}, but the job is at #{}", rank,
                                       collective_name(probe), finished_seq_ + 1)}));
    return;
  }
  if (!open_) {
    open_ = Collective{request.seq, frame.type, Clock::now(),
                       std::vector<std::optional<Blob>>(static_cast<size_t>(size_)), 0};
  } else if (open_->type != frame.type) {
    int other = 0;
    while (!open_->blobs[static_cast<size_t>(other)])
      ++other;
    fail_collective(
        Errc::mismatch,
        fmt::format("ranks disagree on bootstrap collective #{}: rank {} called {}, "
                    "rank {} called {}",
                    request.seq, other, collective_name(*open_), rank, collective_name(probe)));
    send_to_rank(rank, wire::encode(*last_failure_));
    return;
  }
  auto& slot = open_->blobs[static_cast<size_t>(rank)];
  if (slot) {
    throw Error(Errc::protocol,
                fmt::format("rank {} joined {} twice", rank, collective_name(*open_)));
  }
  slot = std::move(request.blob);
  ++open_->contributions;
  if (!notify_) {
    // Without notices a collective needs every rank; one that left cannot join.
    for (int other = 0; other < size_; ++other) {
      const RankState& o = ranks_[static_cast<size_t>(other)];
      if (o.departed && !open_->blobs[static_cast<size_t>(other)]) {
        fail_collective(Errc::peer_failed, fmt::format("rank {} {} before joining {}", other, o.how,
                                                       collective_name(*open_)));
        return;
      }
    }
  }
  try_complete();
}

void Rendezvous::try_complete() {
  if (!open_) return;
  for (int rank = 0; rank < size_; ++rank) {
    const bool excused = notify_ && ranks_[static_cast<size_t>(rank)].departed;
    if (!open_->blobs[static_cast<size_t>(rank)] && !excused) return;
  }
  if (open_->type == wire::FrameType::allgather_request) {
    size_t total = 0;
    for (int rank = 0; rank < size_; ++rank)
      if (const auto& blob = open_->blobs[static_cast<size_t>(rank)]) total += 5 + blob->size();
    if (total + 12 > wire::kMaxPayload) {
      return fail_collective(
          Errc::invalid_argument,
          fmt::format("{}: the blobs total {} bytes, more than the bootstrap's limit of {} bytes",
                      collective_name(*open_), total, wire::kMaxPayload));
    }
  }
  Collective done = std::move(*open_);
  open_.reset();
  finished_seq_ = done.seq;
  last_failure_.reset();
  wire::CollectiveReply reply;
  reply.seq = done.seq;
  if (done.type == wire::FrameType::allgather_request) {
    // Departed ranks are absent even if they contributed: every survivor's
    // reply must agree with the departed set its notices describe.
    reply.blobs = std::move(done.blobs);
    for (int rank = 0; rank < size_; ++rank)
      if (ranks_[static_cast<size_t>(rank)].departed)
        reply.blobs[static_cast<size_t>(rank)].reset();
  }
  const wire::Frame frame = wire::encode(reply);
  for (int rank = 0; rank < size_; ++rank)
    if (!ranks_[static_cast<size_t>(rank)].departed) send_to_rank(rank, frame);
}

void Rendezvous::fail_collective(Errc code, const std::string& message) {
  Collective failed = std::move(*open_);
  open_.reset();
  finished_seq_ = failed.seq;
  last_failure_ = wire::CollectiveError{failed.seq, code, message};
  const wire::Frame frame = wire::encode(*last_failure_);
  for (int rank = 0; rank < size_; ++rank)
    if (failed.blobs[static_cast<size_t>(rank)]) send_to_rank(rank, frame);
}

void Rendezvous::depart(int rank, const std::string& how) {
  RankState& r = ranks_[static_cast<size_t>(rank)];
  if (r.departed) return;
  r.departed = true;
  r.how = how;
  close_rank(rank);
  if (notify_) {
    // Notices go out before any reply that excludes this rank (try_complete below).
    const FailureNotice notice{rank, ++version_, how};
    notices_.push_back(notice);
    const wire::Frame frame = wire::encode(notice);
    for (int other = 0; other < size_; ++other)
      if (!ranks_[static_cast<size_t>(other)].departed) send_to_rank(other, frame);
    try_complete();
  } else if (open_ && !open_->blobs[static_cast<size_t>(rank)]) {
    fail_collective(Errc::peer_failed, fmt::format("rank {} {} before joining {}", rank, how,
                                                   collective_name(*open_)));
  }
}

std::optional<Clock::time_point> Rendezvous::next_deadline() const {
  std::optional<Clock::time_point> out;
  auto consider = [&out](Clock::time_point t) { out = out ? std::min(*out, t) : t; };
  for (const auto& c : strangers_)
    consider(c.deadline);
  if (open_) consider(open_->started + timeout());
  return out;
}

void Rendezvous::on_time(Clock::time_point now) {
  for (auto it = strangers_.begin(); it != strangers_.end();) {
    if (now >= it->deadline) {
      if (!it->close_when_flushed && ++silent_closed_ == 1) {
        log(
            fmt::format("closed a bootstrap connection that did not introduce itself within "
                        "{} ms (run_hello_timeout_ms; reported once)",
                        hello_timeout().count()));
      }
      ::close(it->fd);
      it = strangers_.erase(it);
    } else {
      ++it;
    }
  }
  if (open_ && now >= open_->started + timeout()) {
    std::vector<int> missing;
    std::vector<int> unconnected;
    for (int rank = 0; rank < size_; ++rank) {
      const RankState& r = ranks_[static_cast<size_t>(rank)];
      if (open_->blobs[static_cast<size_t>(rank)] || (notify_ && r.departed)) continue;
      missing.push_back(rank);
      if (r.fd < 0 && !r.closed_at) unconnected.push_back(rank);
    }
    std::string message = fmt::format(
        "{} did not complete within timeout_ms = {} ms: rank(s) {} "
        "did not join",
        collective_name(*open_), timeout_ms(), rank_list(missing));
    if (!unconnected.empty()) {
      message += fmt::format(" (never connected: {})", rank_list(unconnected));
    }
    fail_collective(Errc::timeout, message);
  }
}

}  // namespace grove::launch
