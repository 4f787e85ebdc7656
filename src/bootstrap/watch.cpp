// The watch (watch.hpp): the connection handshake and the thread.

#include "bootstrap/watch.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <list>
#include <random>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/timeouts.hpp"
#include "grove/error.hpp"

namespace grove {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint32_t kMagic = 0x77767267;  // "grvw"
constexpr size_t kHelloSize = 16;        // magic, connector's rank, acceptor's key
constexpr size_t kReplySize = 8;         // magic, acceptor's rank

void put_u32(std::byte* out, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    out[i] = static_cast<std::byte>(v >> (8 * i));
}
void put_u64(std::byte* out, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    out[i] = static_cast<std::byte>(v >> (8 * i));
}
uint32_t get_u32(const std::byte* in) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= static_cast<uint32_t>(in[i]) << (8 * i);
  return v;
}
uint64_t get_u64(const std::byte* in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= static_cast<uint64_t>(in[i]) << (8 * i);
  return v;
}

[[noreturn]] void fail_errno(int rank, std::string_view what) {
  throw Error(Errc::bootstrap,
              fmt::format("bootstrap rank {}: watch: {}: {}", rank, what, std::strerror(errno)));
}

// Kernel keepalive: first probe after 1 s of silence, then one a second;
// the connection fails once `timeout` has passed without an answer.
void set_keepalive(int fd, std::chrono::milliseconds timeout) {
  const int on = 1;
  const int idle = 1;
  const int interval = 1;
  const int probes = static_cast<int>(std::max<int64_t>(1, timeout.count() / 1000 - idle));
  const unsigned user_timeout = static_cast<unsigned>(timeout.count());
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes);
  ::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout, sizeof user_timeout);
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
}

std::vector<uint32_t> local_addresses() {
  std::vector<uint32_t> out;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return out;
  for (const ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
    if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != AF_INET) continue;
    if ((a->ifa_flags & IFF_UP) == 0 || (a->ifa_flags & IFF_LOOPBACK) != 0) continue;
    const auto* in = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
    out.push_back(ntohl(in->sin_addr.s_addr));
  }
  ::freeifaddrs(list);
  return out;
}

// One connection being set up: outgoing (this rank connects to `peer`,
// trying its addresses in turn) or incoming (a stranger until its hello
// names a rank with the right key).
struct Pending {
  Pending() = default;
  Pending(const Pending&) = delete;
  Pending& operator=(const Pending&) = delete;
  ~Pending() {
    if (fd >= 0) ::close(fd);
  }

  bool outgoing = false;
  int peer = -1;  // outgoing: the target; incoming: -1 until the hello is checked
  int fd = -1;
  bool connected = false;  // outgoing: the TCP connect completed
  std::vector<uint32_t> addresses;
  size_t next_address = 0;
  std::byte out[kHelloSize] = {};
  size_t out_size = 0;
  size_t out_done = 0;
  std::byte in[kHelloSize] = {};
  size_t in_want = 0;
  size_t in_done = 0;
  std::string last_error;
};

}  // namespace

Watch::Watch(int rank, int size, NoticeBox& box, std::chrono::milliseconds keepalive_timeout)
    : rank_(rank),
      size_(size),
      box_(box),
      keepalive_timeout_(keepalive_timeout),
      links_(static_cast<size_t>(size), -1) {
  std::random_device random;
  card_.key = (static_cast<uint64_t>(random()) << 32) ^ random();
  card_.ipv4 = local_addresses();
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listen_fd_ < 0) fail_errno(rank_, "socket()");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t length = sizeof address;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(listen_fd_, std::min(size, 4096)) != 0 ||
      ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    const int err = errno;
    ::close(listen_fd_);
    errno = err;
    fail_errno(rank_, "listening socket");
  }
  card_.port = ntohs(address.sin_port);
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (stop_fd_ < 0) {
    ::close(listen_fd_);
    fail_errno(rank_, "eventfd()");
  }
}

Watch::~Watch() {
  if (thread_.joinable()) {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(stop_fd_, &one, sizeof one);
    thread_.join();
  }
  for (int fd : links_)
    if (fd >= 0) ::close(fd);
  if (listen_fd_ >= 0) ::close(listen_fd_);
  ::close(stop_fd_);
}

void Watch::connect(const std::vector<WatchCard>& cards, const Hosts& hosts) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms());
  std::list<Pending> pending;

  // Starts (or restarts, at the next address) the outgoing connection `p`.
  // Returns false once every address has failed.
  auto start_outgoing = [&](Pending& p) {
    while (p.next_address < p.addresses.size()) {
      if (p.fd >= 0) ::close(p.fd);
      p.fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      if (p.fd < 0) fail_errno(rank_, "socket()");
      set_keepalive(p.fd, keepalive_timeout_);
      sockaddr_in to{};
      to.sin_family = AF_INET;
      to.sin_port = htons(cards[static_cast<size_t>(p.peer)].port);
      to.sin_addr.s_addr = htonl(p.addresses[p.next_address++]);
      if (::connect(p.fd, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0 ||
          errno == EINPROGRESS) {
        return true;
      }
      p.last_error = fmt::format("{}: {}", WatchCard::address_text(ntohl(to.sin_addr.s_addr)),
                                 std::strerror(errno));
    }
    return false;
  };

  for (int peer = rank_ + 1; peer < size_; ++peer) {
    Pending& p = pending.emplace_back();
    p.outgoing = true;
    p.peer = peer;
    const WatchCard& card = cards[static_cast<size_t>(peer)];
    if (hosts.of_rank[static_cast<size_t>(peer)] == hosts.of_rank[static_cast<size_t>(rank_)]) {
      p.addresses.push_back(INADDR_LOOPBACK);
    }
    p.addresses.insert(p.addresses.end(), card.ipv4.begin(), card.ipv4.end());
    put_u32(p.out, kMagic);
    put_u32(p.out + 4, static_cast<uint32_t>(rank_));
    put_u64(p.out + 8, card.key);
    p.out_size = kHelloSize;
    p.in_want = kReplySize;
    if (!start_outgoing(p)) {
      throw Error(Errc::bootstrap,
                  fmt::format("bootstrap rank {}: watch: rank {} published no address this host "
                              "can connect to ({})",
                              rank_, peer, p.last_error.empty() ? "none" : p.last_error));
    }
  }
  int missing = size_ - 1;

  // Moves bytes of `p` and advances its state; returns false when `p` is
  // done with (closed), true while it lives.
  auto step = [&](Pending& p, short revents) -> bool {
    for (;;) {
      if (p.outgoing && !p.connected) {
        int err = 0;
        socklen_t len = sizeof err;
        ::getsockopt(p.fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err == 0 && (revents & POLLOUT) == 0) return true;
        if (err != 0) {
          p.last_error =
              fmt::format("{}: {}", WatchCard::address_text(p.addresses[p.next_address - 1]),
                          std::strerror(err));
          if (start_outgoing(p)) return true;
          throw Error(Errc::bootstrap,
                      fmt::format("bootstrap rank {}: watch: cannot connect to rank {} ({})", rank_,
                                  p.peer, p.last_error));
        }
        p.connected = true;
      }
      while (p.out_done < p.out_size) {
        const ssize_t n = ::send(p.fd, p.out + p.out_done, p.out_size - p.out_done, MSG_NOSIGNAL);
        if (n > 0) {
          p.out_done += static_cast<size_t>(n);
          continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) return true;
        if (!p.outgoing) return false;  // a stranger that went away
        throw Error(Errc::bootstrap, fmt::format("bootstrap rank {}: watch: sending to rank {}: {}",
                                                 rank_, p.peer, std::strerror(errno)));
      }
      while (p.in_done < p.in_want) {
        const ssize_t n = ::recv(p.fd, p.in + p.in_done, p.in_want - p.in_done, 0);
        if (n > 0) {
          p.in_done += static_cast<size_t>(n);
          continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) return true;
        if (!p.outgoing) return false;
        throw Error(
            Errc::bootstrap,
            fmt::format("bootstrap rank {}: watch: rank {} closed the connection during the "
                        "handshake ({})",
                        rank_, p.peer, n == 0 ? "end of stream" : std::strerror(errno)));
      }
      if (p.outgoing) {
        if (p.in_done == kReplySize) {
          if (get_u32(p.in) != kMagic || get_u32(p.in + 4) != static_cast<uint32_t>(p.peer)) {
            throw Error(Errc::protocol,
                        fmt::format("bootstrap rank {}: watch: the process at rank {}'s address "
                                    "answered as someone else",
                                    rank_, p.peer));
          }
          links_[static_cast<size_t>(p.peer)] = std::exchange(p.fd, -1);
          --missing;
          return false;
        }
        return true;
      }
      if (p.peer < 0 && p.in_done == kHelloSize) {
        const uint32_t from = get_u32(p.in + 4);
        const bool valid = get_u32(p.in) == kMagic && from < static_cast<uint32_t>(rank_) &&
                           get_u64(p.in + 8) == card_.key && links_[from] < 0;
        if (!valid) return false;  // not one of this job's ranks, or a duplicate
        p.peer = static_cast<int>(from);
        put_u32(p.out, kMagic);
        put_u32(p.out + 4, static_cast<uint32_t>(rank_));
        p.out_size = kReplySize;
        continue;  // send the reply
      }
      if (p.peer >= 0 && p.out_done == p.out_size) {
        links_[static_cast<size_t>(p.peer)] = std::exchange(p.fd, -1);
        --missing;
        return false;
      }
      return true;
    }
  };

  std::vector<pollfd> fds;
  std::vector<Pending*> owners;
  while (missing > 0) {
    fds.clear();
    owners.clear();
    if (std::count_if(links_.begin(), links_.begin() + rank_, [](int fd) { return fd < 0; }) > 0)
      fds.push_back({listen_fd_, POLLIN, 0});
    for (Pending& p : pending) {
      const bool writing = (p.outgoing && !p.connected) || p.out_done < p.out_size;
      fds.push_back({p.fd, static_cast<short>(writing ? POLLOUT : POLLIN), 0});
      owners.push_back(&p);
    }
    const int n = ::poll(fds.data(), fds.size(), poll_ms_until(deadline));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail_errno(rank_, "poll()");
    if (n == 0) {
      std::vector<int> absent;
      for (int r = 0; r < size_; ++r)
        if (r != rank_ && links_[static_cast<size_t>(r)] < 0) absent.push_back(r);
      throw Error(Errc::timeout,
                  fmt::format("bootstrap rank {}: watch: no connection with rank(s) {} within "
                              "timeout_ms = {}",
                              rank_, fmt::join(absent, ", "), timeout_ms()));
    }
    const size_t first_owner = fds.size() - owners.size();
    if (first_owner == 1 && (fds[0].revents & POLLIN)) {
      for (;;) {
        const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) break;
        set_keepalive(fd, keepalive_timeout_);
        Pending& p = pending.emplace_back();
        p.fd = fd;
        p.in_want = kHelloSize;
      }
    }
    for (size_t i = first_owner; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      Pending* p = owners[i - first_owner];
      if (!step(*p, fds[i].revents)) {
        if (p->fd >= 0) ::close(p->fd);
        p->fd = -1;
      }
    }
    pending.remove_if([](const Pending& p) { return p.fd < 0; });
  }
  pending.clear();
  // Every rank is connected: nobody else may connect.
  ::close(listen_fd_);
  listen_fd_ = -1;
  thread_ = std::thread([this] { run(); });
}

void Watch::report(int peer, int err) {
  std::string how;
  if (err == 0) {
    how = "its process ended (watch connection closed)";
  } else if (err == ECONNRESET) {
    how = "its process ended (watch connection reset)";
  } else if (err == ETIMEDOUT) {
    how = fmt::format("its host stopped answering (no keepalive answer for {} ms)",
                      keepalive_timeout_.count());
  } else if (err == -1) {
    how = "it sent bytes on its watch connection, which carries none";
  } else {
    how = fmt::format("its watch connection failed: {}", std::strerror(err));
  }
  box_.report(peer, how);
}

void Watch::run() {
  std::vector<pollfd> fds;
  fds.push_back({stop_fd_, POLLIN, 0});
  for (int r = 0; r < size_; ++r)
    fds.push_back({links_[static_cast<size_t>(r)], POLLIN, 0});  // fd -1: ignored by poll
  for (;;) {
    const int n = ::poll(fds.data(), fds.size(), -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || (fds[0].revents & POLLIN)) return;
    for (int r = 0; r < size_; ++r) {
      pollfd& p = fds[static_cast<size_t>(r) + 1];
      if (p.fd < 0 || p.revents == 0) continue;
      std::byte byte;
      const ssize_t got = ::recv(p.fd, &byte, 1, MSG_DONTWAIT);
      if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      report(r, got == 0 ? 0 : got > 0 ? -1 : errno);
      ::close(p.fd);
      links_[static_cast<size_t>(r)] = -1;
      p.fd = -1;
    }
  }
}

}  // namespace grove
