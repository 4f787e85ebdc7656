#include "fork_ranks.hpp"

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <thread>

#include <fmt/format.h>

#include "grove/error.hpp"

namespace grove::testing {
namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void bootstrap_error(const std::string& what) {
  throw Error(Errc::bootstrap, "fork bootstrap: " + what);
}

// Blocking full write/read bounded by the deadline.
void write_all(int fd, const void* data, size_t length) {
  const auto* p = static_cast<const char*>(data);
  while (length > 0) {
    const ssize_t n = ::write(fd, p, length);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) bootstrap_error(fmt::format("write: {}", std::strerror(errno)));
    p += n;
    length -= static_cast<size_t>(n);
  }
}

void read_all(int fd, void* data, size_t length, Clock::time_point deadline) {
  auto* p = static_cast<char*>(data);
  while (length > 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) bootstrap_error("timed out waiting for the parent");
    pollfd fd_wait{fd, POLLIN, 0};
    const int ready = ::poll(&fd_wait, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    const ssize_t n = ::read(fd, p, length);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) bootstrap_error("the parent closed the connection");
    p += n;
    length -= static_cast<size_t>(n);
  }
}

// The parent's view of one child.
struct Child {
  pid_t pid = -1;
  int fd = -1;
  std::vector<std::byte> inbox;  // bytes read, not yet parsed
  bool has_frame = false;        // contributed to the current round
  Blob frame;
  bool ended = false;
  ChildEnd end;
};

// Moves a complete frame from the child's inbox to its contribution.
void parse_frame(Child& child) {
  if (child.has_frame || child.inbox.size() < sizeof(uint64_t)) return;
  uint64_t length = 0;
  std::memcpy(&length, child.inbox.data(), sizeof length);
  if (child.inbox.size() < sizeof length + length) return;
  const auto begin = child.inbox.begin() + static_cast<std::ptrdiff_t>(sizeof length);
  child.frame.assign(begin, begin + static_cast<std::ptrdiff_t>(length));
  child.inbox.erase(child.inbox.begin(), begin + static_cast<std::ptrdiff_t>(length));
  child.has_frame = true;
}

// When every child has contributed, sends each the full set.
void relay_round(std::vector<Child>& children) {
  for (const Child& c : children) {
    if (!c.has_frame) return;
  }
  std::vector<std::byte> out;
  for (const Child& c : children) {
    const uint64_t length = c.frame.size();
    const auto* l = reinterpret_cast<const std::byte*>(&length);
    out.insert(out.end(), l, l + sizeof length);
    out.insert(out.end(), c.frame.begin(), c.frame.end());
  }
  for (Child& c : children) {
    c.has_frame = false;
    if (c.fd >= 0) {
      try {
        write_all(c.fd, out.data(), out.size());
      } catch (const Error&) {
        // The child died; its exit status tells the story.
      }
    }
    parse_frame(c);
  }
}

void child_main(int rank, int size, int fd, const std::function<void(ForkBootstrap&)>& body) {
  int code = 0;
  try {
    ForkBootstrap bootstrap(rank, size, fd);
    body(bootstrap);
    code = ::testing::Test::HasFailure() ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: exception: %s\n", rank, e.what());
    code = 2;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(code);
}

}  // namespace

std::vector<Blob> ForkBootstrap::allgather(std::span<const std::byte> mine) {
  const uint64_t length = mine.size();
  write_all(fd_, &length, sizeof length);
  if (!mine.empty()) write_all(fd_, mine.data(), mine.size());
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  std::vector<Blob> all(static_cast<size_t>(size_));
  for (Blob& blob : all) {
    uint64_t n = 0;
    read_all(fd_, &n, sizeof n, deadline);
    blob.resize(n);
    if (n > 0) read_all(fd_, blob.data(), n, deadline);
  }
  return all;
}

std::string ChildEnd::describe() const {
  if (timed_out) return "timed out (killed)";
  if (signal != 0) return fmt::format("signal {}", signal);
  return fmt::format("exit code {}", code);
}

void expect_all_exited_zero(const std::vector<ChildEnd>& ends) {
  for (size_t r = 0; r < ends.size(); ++r) {
    EXPECT_TRUE(ends[r].code == 0 && !ends[r].timed_out && ends[r].signal == 0)
        << "rank " << r << ": " << ends[r].describe();
  }
}

std::vector<ChildEnd> run_ranks(int ranks, const std::function<void(ForkBootstrap&)>& body,
                                std::chrono::seconds limit) {
  std::vector<Child> children(static_cast<size_t>(ranks));
  std::fflush(stdout);
  std::fflush(stderr);
  for (int r = 0; r < ranks; ++r) {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
      ADD_FAILURE() << "socketpair: " << std::strerror(errno);
      return {};
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(pair[0]);
      for (int i = 0; i < r; ++i)
        ::close(children[static_cast<size_t>(i)].fd);
      child_main(r, ranks, pair[1], body);
    }
    ::close(pair[1]);
    children[static_cast<size_t>(r)].pid = pid;
    children[static_cast<size_t>(r)].fd = pair[0];
  }

  const auto deadline = Clock::now() + limit;
  size_t ended = 0;
  while (ended < children.size()) {
    if (Clock::now() > deadline) {
      for (Child& c : children) {
        if (c.ended) continue;
        ::kill(c.pid, SIGKILL);
        ::waitpid(c.pid, nullptr, 0);
        c.ended = true;
        c.end.timed_out = true;
      }
      break;
    }
    std::vector<pollfd> fds;
    std::vector<Child*> owners;
    for (Child& c : children) {
      if (c.fd < 0) continue;
      fds.push_back({c.fd, POLLIN, 0});
      owners.push_back(&c);
    }
    if (fds.empty()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    } else {
      ::poll(fds.data(), fds.size(), 20);
    }
    for (size_t i = 0; i < fds.size(); ++i) {
      if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      Child& c = *owners[i];
      std::byte buffer[65536];
      const ssize_t n = ::read(c.fd, buffer, sizeof buffer);
      if (n > 0) {
        c.inbox.insert(c.inbox.end(), buffer, buffer + n);
        parse_frame(c);
      } else if (n == 0 || errno != EINTR) {
        ::close(c.fd);
        c.fd = -1;
      }
    }
    relay_round(children);
    for (Child& c : children) {
      if (c.ended) continue;
      int status = 0;
      if (::waitpid(c.pid, &status, WNOHANG) != c.pid) continue;
      c.ended = true;
      ++ended;
      if (WIFEXITED(status)) c.end.code = WEXITSTATUS(status);
      if (WIFSIGNALED(status)) c.end.signal = WTERMSIG(status);
    }
  }
  std::vector<ChildEnd> ends;
  for (Child& c : children) {
    if (c.fd >= 0) ::close(c.fd);
    ends.push_back(c.end);
  }
  return ends;
}

bool wait_for(Transport& transport, const std::function<bool()>& pred,
              std::chrono::milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  while (!pred()) {
    if (Clock::now() > deadline) return false;
    if (!transport.progress()) transport.block(-1, std::chrono::milliseconds(5));
  }
  return true;
}

bool wait_blocking(Transport& transport, const std::function<bool()>& pred,
                   std::chrono::milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  while (!pred()) {
    const auto left =
        std::chrono::duration_cast<std::chrono::microseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    if (!transport.progress()) transport.block(-1, left);
  }
  return true;
}

void transport_barrier(Transport& transport) {
  static uint32_t round = 0;
  ++round;
  const Tag t = tag::make(4095, round, tag::Topology::none, 0, 63);
  const auto n = static_cast<size_t>(transport.size());
  std::vector<Completed> sent(n), received(n);
  std::byte unused{};
  for (int peer = 0; peer < transport.size(); ++peer) {
    transport.recv(peer, t, &unused, 0, &Completed::fn, &received[static_cast<size_t>(peer)]);
    transport.send(peer, t, &unused, 0, &Completed::fn, &sent[static_cast<size_t>(peer)]);
  }
  const bool done = wait_for(transport, [&] {
    for (size_t i = 0; i < n; ++i) {
      if (sent[i].count == 0 || received[i].count == 0) return false;
    }
    return true;
  });
  if (!done) throw Error(Errc::timeout, "transport barrier timed out");
}

std::byte pattern_byte(int source, int destination, int which, size_t index) {
  const uint64_t x =
      (static_cast<uint64_t>(index) * 2654435761u) ^ (static_cast<uint64_t>(source) << 8) ^
      (static_cast<uint64_t>(destination) << 16) ^ (static_cast<uint64_t>(which) << 24);
  return static_cast<std::byte>((x >> 5) ^ (x >> 13) ^ x);
}

std::vector<std::byte> pattern(int source, int destination, int which, size_t length) {
  std::vector<std::byte> out(length);
  for (size_t i = 0; i < length; ++i)
    out[i] = pattern_byte(source, destination, which, i);
  return out;
}

}  // namespace grove::testing
