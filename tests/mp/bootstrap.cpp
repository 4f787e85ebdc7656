// Multi-process driver for the bootstrap and `grove run` (see tests/mp/tests.cmake).
//
//   mp_bootstrap                  allgather rounds (blob sizes 0..70000) and barriers
//   mp_bootstrap singleton        the same, and the backend must be `singleton`, size 1
//   mp_bootstrap exit CODE RANK   rank RANK exits with CODE after the first round
//   mp_bootstrap signal RANK      rank RANK raises SIGKILL after the first round
//   mp_bootstrap hang             all ranks sleep after a barrier (rank 0 prints "hanging")
//   mp_bootstrap notify RANK      rank RANK exits 1; survivors check the FailureNotice and
//                                 allgather over the live ranks (run with --on-failure=notify)
//   mp_bootstrap badkey           the last rank is refused with a wrong key and as a
//                                 duplicate, then joins properly; the job completes
//   mp_bootstrap param NAME VALUE NAME is VALUE and came from --param
//   mp_bootstrap notify RANK HOW  as notify, and the notice's text contains HOW
//   mp_bootstrap notice RANK HOW  rank RANK exits 1 after the first round; every survivor
//                                 waits for the notice naming it (survivors that end after
//                                 it may be reported too), checks it, prints "notice ok: rank R"
//   mp_bootstrap hosts BACKEND H P PREFIX
//                                 the backend is BACKEND and the ranks run P per host on H
//                                 hosts in rank order, named PREFIX0, PREFIX1, ... (PREFIX
//                                 "-": this machine's name); then the full check
//   mp_bootstrap late RANK MS     rank RANK starts its bootstrap MS ms late; the others must
//                                 fail with a named timeout
//   mp_bootstrap flood COUNT      before any rank connects, rank 0 opens COUNT connections to
//                                 the launcher that never finish a hello (half send nothing,
//                                 half a partial header) and holds them; the job completes
//
// Exit status: 0 when every check passed, 3 on a wrong result, 1 on a grove::Error.

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bootstrap/backends.hpp"
#include "bootstrap/bootstrap.hpp"
#include "core/params.hpp"
#include "core/timeouts.hpp"
#include "grove/error.hpp"

namespace {

using grove::Blob;
using grove::Bootstrap;

struct CheckFailed {
  std::string what;
};

void check(bool ok, const std::string& what) {
  if (!ok) throw CheckFailed{what};
}

size_t blob_size(int rank, int round) {
  static const size_t sizes[] = {0, 1, 7, 100, 4096, 0, 70000, 13};
  return sizes[static_cast<size_t>(rank + round) % std::size(sizes)];
}

Blob make_blob(int rank, int round) {
  Blob blob(blob_size(rank, round));
  for (size_t j = 0; j < blob.size(); ++j)
    blob[j] = static_cast<std::byte>((rank * 31 + round * 7 + static_cast<int>(j)) & 0xff);
  return blob;
}

// One allgather; every live rank's blob must match exactly, departed ranks are empty.
void allgather_round(Bootstrap& b, int round, const grove::FailureView& view = {}) {
  const std::vector<Blob> all = b.allgather(make_blob(b.rank(), round));
  check(all.size() == static_cast<size_t>(b.size()),
        fmt::format("round {}: {} blobs for {} ranks", round, all.size(), b.size()));
  for (int r = 0; r < b.size(); ++r) {
    const Blob expected = view.alive(r) ? make_blob(r, round) : Blob{};
    check(all[static_cast<size_t>(r)] == expected,
          fmt::format("round {}: blob of rank {} differs ({} bytes, expected {})", round, r,
                      all[static_cast<size_t>(r)].size(), expected.size()));
  }
}

void full_check(Bootstrap& b) {
  for (int round = 0; round < 8; ++round) {
    allgather_round(b, round);
    if (round % 3 == 0) b.barrier();
  }
  b.barrier();
  if (b.rank() == 0) fmt::print("bootstrap ok: {} ranks\n", b.size());
}

int arg_int(int argc, char** argv, int index) {
  check(index < argc, "missing argument");
  return std::atoi(argv[index]);
}

// Blocks on the notice descriptor (never spins) until a notice arrives.
grove::FailureNotice wait_for_notice(Bootstrap& b) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(grove::timeout_ms());
  for (;;) {
    auto notices = b.poll_notices();
    if (!notices.empty()) {
      check(notices.size() == 1, fmt::format("{} notices, expected 1", notices.size()));
      return notices.front();
    }
    check(std::chrono::steady_clock::now() < deadline, "no failure notice within timeout_ms");
    pollfd p{b.notice_fd(), POLLIN, 0};
    ::poll(&p, 1, 1000);
  }
}

// The one notice a survivor gets when `leaver` exits after the first round.
grove::FailureNotice expect_notice(Bootstrap& b, int leaver, const std::string& how) {
  allgather_round(b, 0);
  if (b.rank() == leaver) std::exit(1);
  const grove::FailureNotice notice = wait_for_notice(b);
  check(notice.rank == leaver && notice.version == 1,
        fmt::format("notice: rank {} version {} ({}), expected rank {} version 1", notice.rank,
                    notice.version, notice.how, leaver));
  check(notice.how.find(how) != std::string::npos,
        fmt::format("notice says '{}', expected '{}' in it", notice.how, how));
  return notice;
}

// Without a collective after the departure (see the header): a survivor that
// is done leaves, and others may learn of that too, in any order.
void notice_mode(Bootstrap& b, int leaver, const std::string& how) {
  allgather_round(b, 0);
  if (b.rank() == leaver) std::exit(1);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(grove::timeout_ms());
  uint64_t last_version = 0;
  for (;;) {
    for (const grove::FailureNotice& notice : b.poll_notices()) {
      check(notice.version == last_version + 1,
            fmt::format("notice version {} after {}", notice.version, last_version));
      last_version = notice.version;
      if (notice.rank != leaver) continue;
      check(notice.how.find(how) != std::string::npos,
            fmt::format("notice says '{}', expected '{}' in it", notice.how, how));
      fmt::print("notice ok: rank {}\n", b.rank());
      return;
    }
    check(std::chrono::steady_clock::now() < deadline, "no notice of the leaver within timeout_ms");
    pollfd p{b.notice_fd(), POLLIN, 0};
    ::poll(&p, 1, 1000);
  }
}

void notify_mode(Bootstrap& b, int leaver, const std::string& how) {
  const grove::FailureNotice notice = expect_notice(b, leaver, how);
  grove::FailureView view;
  view.apply(notice);
  allgather_round(b, 1, view);
  b.barrier();
  // Everyone reports its verdict; the lowest survivor prints one line for all.
  const std::vector<Blob> verdicts = b.allgather(std::vector<std::byte>{std::byte{1}});
  int survivors = 0;
  for (int r = 0; r < b.size(); ++r) {
    if (!view.alive(r)) continue;
    check(verdicts[static_cast<size_t>(r)] == Blob{std::byte{1}},
          fmt::format("rank {} did not report", r));
    ++survivors;
  }
  const int lowest = leaver == 0 ? 1 : 0;
  if (b.rank() == lowest) fmt::print("notify ok: {} survivors\n", survivors);
}

void expect_refused(const std::string& why) {
  try {
    auto b = grove::bootstrap_from_environment();
    throw CheckFailed{fmt::format("connection was accepted; expected a refusal ({})", why)};
  } catch (const grove::Error& e) {
    check(e.code() == grove::Errc::bootstrap,
          fmt::format("refusal has code '{}'", grove::errc_name(e.code())));
    const std::string message = e.what();
    check(message.find("refused") != std::string::npos && message.find(why) != std::string::npos,
          fmt::format("refusal message '{}' does not say '{}'", message, why));
  }
}

int badkey_mode() {
  const char* size_env = std::getenv("GROVE_JOB_SIZE");
  const char* rank_env = std::getenv("GROVE_JOB_RANK");
  check(size_env && rank_env, "badkey needs grove run");
  const bool last = std::atoi(rank_env) == std::atoi(size_env) - 1;
  if (last) {
    const std::string key = std::getenv("GROVE_JOB_KEY");
    ::setenv("GROVE_JOB_KEY", "0123456789abcdef0123456789abcdef", 1);
    expect_refused("wrong job key");
    ::setenv("GROVE_JOB_KEY", key.c_str(), 1);
  }
  auto b = grove::bootstrap_from_environment();
  if (last) expect_refused("already connected");
  full_check(*b);
  return 0;
}

// The rank this process will be, before any bootstrap exists.
int rank_from_environment() {
  for (const char* name : {"GROVE_JOB_RANK", "PMIX_RANK"})
    if (const char* value = std::getenv(name)) return std::atoi(value);
  return 0;
}

void hosts_mode(Bootstrap& b, const std::string& backend, int hosts, int per_host,
                const std::string& prefix) {
  check(b.name() == backend, fmt::format("backend '{}', expected '{}'", b.name(), backend));
  check(b.size() == hosts * per_host,
        fmt::format("{} ranks, expected {} hosts x {}", b.size(), hosts, per_host));
  check(b.hosts().count() == hosts, fmt::format("{} hosts, expected {}", b.hosts().count(), hosts));
  for (int r = 0; r < b.size(); ++r) {
    const int host = r / per_host;
    check(b.host_of(r) == host,
          fmt::format("rank {} on host {}, expected {}", r, b.host_of(r), host));
  }
  for (int h = 0; h < hosts; ++h) {
    const std::string expected =
        prefix == "-" ? grove::this_host_name() : prefix + std::to_string(h);
    check(b.hosts().names[static_cast<size_t>(h)] == expected,
          fmt::format("host {} is named '{}', expected '{}'", h,
                      b.hosts().names[static_cast<size_t>(h)], expected));
  }
  std::vector<int> mine;
  for (int r = b.rank() / per_host * per_host; r < (b.rank() / per_host + 1) * per_host; ++r)
    mine.push_back(r);
  check(b.local_peers() == mine,
        fmt::format("rank {}: local peers {}, expected {}", b.rank(),
                    fmt::join(b.local_peers(), ","), fmt::join(mine, ",")));
  full_check(b);
  if (b.rank() == 0) fmt::print("hosts ok: {} hosts x {} ranks ({})\n", hosts, per_host, backend);
}

// Opens a connection to the launcher's socket; -1 if it cannot.
int connect_to_launcher() {
  const char* path = std::getenv("GROVE_JOB_RENDEZVOUS");
  check(path != nullptr, "flood needs grove run");
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  check(std::strlen(path) < sizeof(address.sun_path), "rendezvous path too long");
  std::strcpy(address.sun_path, path);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Rank 0 floods the launcher, then lets the others start (a flag file
// named after the job key); every rank then joins through the real
// bootstrap, which must admit all of them.
int flood_mode(int count) {
  const std::string key = std::getenv("GROVE_JOB_KEY") ? std::getenv("GROVE_JOB_KEY") : "";
  const char* tmp = std::getenv("TMPDIR");
  const std::string flag =
      fmt::format("{}/grove-flood-{}", tmp && *tmp ? tmp : "/tmp", key.substr(0, 12));
  const bool leader = std::atoi(std::getenv("GROVE_JOB_RANK")) == 0;
  std::vector<int> strangers;
  if (leader) {
    const unsigned char partial_header[3] = {4, 0, 0};  // 3 of a hello's 5 header bytes
    for (int i = 0; i < count; ++i) {
      const int fd = connect_to_launcher();
      check(fd >= 0, fmt::format("flood connection {} failed: {}", i, std::strerror(errno)));
      // The launcher may already have closed it to make room: that is its
      // right, and the flood goes on.
      if (i % 2 == 1) ::send(fd, partial_header, sizeof(partial_header), MSG_NOSIGNAL);
      strangers.push_back(fd);
    }
    FILE* f = std::fopen(flag.c_str(), "w");
    check(f != nullptr, fmt::format("cannot create {}", flag));
    std::fclose(f);
  } else {
    // Bounded: the flood takes well under a second.
    for (int tries = 0; ::access(flag.c_str(), F_OK) != 0; ++tries) {
      check(tries < 3000, "rank 0 never finished its flood");
      ::poll(nullptr, 0, 10);
    }
  }
  auto b = grove::bootstrap_from_environment();
  full_check(*b);
  if (leader) {
    ::unlink(flag.c_str());
    for (int fd : strangers)
      ::close(fd);
    fmt::print("flood ok: {} ranks admitted past {} idle connections\n", b->size(), count);
  }
  return 0;
}

int run(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "badkey") return badkey_mode();
  if (mode == "flood") return flood_mode(arg_int(argc, argv, 2));
  if (mode == "late" && rank_from_environment() == arg_int(argc, argv, 2)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(arg_int(argc, argv, 3)));
  }
  auto b = grove::bootstrap_from_environment();
  if (mode.empty()) {
    full_check(*b);
  } else if (mode == "singleton") {
    check(b->name() == "singleton" && b->size() == 1 && b->rank() == 0,
          fmt::format("backend {} rank {} of {}", b->name(), b->rank(), b->size()));
    check(b->notice_fd() == -1 && b->poll_notices().empty(), "singleton has notices");
    full_check(*b);
  } else if (mode == "exit" || mode == "signal") {
    const int code = mode == "exit" ? arg_int(argc, argv, 2) : 0;
    const int victim = arg_int(argc, argv, mode == "exit" ? 3 : 2);
    allgather_round(*b, 0);
    if (b->rank() == victim) {
      if (mode == "exit") std::exit(code);
      std::raise(SIGKILL);
    }
    b->barrier();  // the others wait here until the launcher reacts
    allgather_round(*b, 1);
  } else if (mode == "hang") {
    b->barrier();
    if (b->rank() == 0) {
      fmt::print("hanging\n");
      std::fflush(stdout);
    }
    for (;;)
      ::pause();
  } else if (mode == "notify") {
    notify_mode(*b, arg_int(argc, argv, 2), argc > 3 ? argv[3] : "");
  } else if (mode == "notice") {
    notice_mode(*b, arg_int(argc, argv, 2), argc > 3 ? argv[3] : "");
  } else if (mode == "hosts") {
    check(argc > 5, "hosts BACKEND H P PREFIX");
    hosts_mode(*b, argv[2], arg_int(argc, argv, 3), arg_int(argc, argv, 4), argv[5]);
  } else if (mode == "late") {
    full_check(*b);
    throw CheckFailed{"the job started although a rank was late beyond timeout_ms"};
  } else if (mode == "param") {
    check(argc > 3, "param NAME VALUE");
    const auto& entry = grove::params::Registry::global().get(argv[2]);
    check(entry.text == argv[3] && entry.source == grove::params::Source::command_line,
          fmt::format("{} = '{}' from {}, expected '{}' from --param", argv[2], entry.text,
                      grove::params::source_name(entry.source), argv[3]));
    full_check(*b);
  } else {
    throw CheckFailed{fmt::format("unknown mode '{}'", mode)};
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string rank = std::to_string(rank_from_environment());
  try {
    return run(argc, argv);
  } catch (const CheckFailed& e) {
    fmt::print(stderr, "mp_bootstrap rank {}: check failed: {}\n", rank, e.what);
    return 3;
  } catch (const grove::Error& e) {
    fmt::print(stderr, "mp_bootstrap rank {}: {}: {}\n", rank, grove::errc_name(e.code()),
               e.what());
    return 1;
  }
}
