// The launcher's rendezvous and the `local` bootstrap together, in one
// process: the rendezvous runs on a driver thread, each rank on its own.

#include "bootstrap/rendezvous.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>

#include "bootstrap/backends.hpp"
#include "bootstrap/job_identity.hpp"
#include "core/params.hpp"

namespace grove::launch {
namespace {

// Serves a Rendezvous on its own thread; actions (departures) run there too,
// since the Rendezvous is single-threaded.
class Driver {
 public:
  Driver(int size, bool notify) : rz_(size, notify), thread_([this] { loop(); }) {}
  ~Driver() {
    stop_ = true;
    thread_.join();
  }
  const Rendezvous& rz() const { return rz_; }
  void depart(int rank, std::string how) {
    std::lock_guard lock(mutex_);
    actions_.push_back([this, rank, how] { rz_.depart(rank, how); });
  }

 private:
  void loop() {
    while (!stop_) {
      std::vector<pollfd> fds = rz_.pollfds();
      ::poll(fds.data(), fds.size(), 5);
      rz_.handle(fds);
      rz_.on_time(Clock::now());
      std::vector<std::function<void()>> todo;
      {
        std::lock_guard lock(mutex_);
        todo.swap(actions_);
      }
      for (auto& action : todo)
        action();
    }
  }
  Rendezvous rz_;
  std::mutex mutex_;
  std::vector<std::function<void()>> actions_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

Blob blob_for(int rank, size_t size) {
  Blob b(size);
  for (size_t i = 0; i < size; ++i)
    b[i] = static_cast<std::byte>(rank * 13 + static_cast<int>(i));
  return b;
}

std::string error_of(const std::function<void()>& f, Errc expected) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), expected) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no grove::Error thrown";
  return "";
}

TEST(Rendezvous, AllgatherAndBarrierAcrossRanks) {
  constexpr int kSize = 4;
  Driver driver(kSize, false);
  std::vector<std::thread> ranks;
  std::atomic<int> good{0};
  for (int rank = 0; rank < kSize; ++rank) {
    ranks.emplace_back([&, rank] {
      auto b = make_local_bootstrap(rank, kSize, driver.rz().socket_path(), driver.rz().key());
      for (int round = 0; round < 3; ++round) {
        const auto all = b->allgather(blob_for(rank, static_cast<size_t>(rank * round * 100)));
        bool ok = all.size() == kSize;
        for (int r = 0; ok && r < kSize; ++r)
          ok = all[static_cast<size_t>(r)] == blob_for(r, static_cast<size_t>(r * round * 100));
        b->barrier();
        if (ok) ++good;
      }
    });
  }
  for (auto& t : ranks)
    t.join();
  EXPECT_EQ(good, 3 * kSize);
}

TEST(Rendezvous, RefusesWrongKeyOutOfRangeAndDuplicates) {
  Driver driver(2, false);
  const std::string& path = driver.rz().socket_path();
  EXPECT_NE(error_of([&] { make_local_bootstrap(0, 2, path, "not-the-key"); }, Errc::bootstrap)
                .find("wrong job key"),
            std::string::npos);
  EXPECT_NE(error_of([&] { make_local_bootstrap(5, 6, path, driver.rz().key()); }, Errc::bootstrap)
                .find("out of range"),
            std::string::npos);
  auto first = make_local_bootstrap(0, 2, path, driver.rz().key());
  EXPECT_NE(error_of([&] { make_local_bootstrap(0, 2, path, driver.rz().key()); }, Errc::bootstrap)
                .find("already connected"),
            std::string::npos);
}

// Raw bytes from a stranger: garbage, an oversized header, a hang-up mid-frame.
TEST(Rendezvous, SurvivesMalformedStrangers) {
  Driver driver(2, false);
  const std::string& path = driver.rz().socket_path();
  const std::vector<std::vector<unsigned char>> inputs = {
      {0xde, 0xad, 0xbe, 0xef, 0x42, 0x00},
      {0xff, 0xff, 0xff, 0x7f, 0x01},
      {0x10, 0x00, 0x00, 0x00, 0x01, 0x00},
      {0x00, 0x00, 0x00, 0x00, 0x04},
  };
  for (const auto& bytes : inputs) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    ASSERT_EQ(::write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    ::close(fd);
  }
  // The job is unaffected.
  std::thread other([&] {
    auto b = make_local_bootstrap(1, 2, path, driver.rz().key());
    b->barrier();
  });
  auto b = make_local_bootstrap(0, 2, path, driver.rz().key());
  b->barrier();
  other.join();
}

int connect_raw(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// More connections than the launcher holds, none finishing a hello, made
// before any rank connects: the ranks are still admitted (the longest
// waiting strangers make room), and the silent ones are closed.
TEST(Rendezvous, IdleStrangersDoNotLockOutRanks) {
  Driver driver(2, false);
  const std::string& path = driver.rz().socket_path();
  std::vector<int> idle;
  const unsigned char partial_header[3] = {4, 0, 0};
  for (int i = 0; i < 300; ++i) {
    const int fd = connect_raw(path);
    ASSERT_GE(fd, 0) << "connection " << i;
    if (i % 2) {
      ASSERT_EQ(::write(fd, partial_header, 3), 3);
    }
    idle.push_back(fd);
  }
  std::thread other([&] {
    auto b = make_local_bootstrap(1, 2, path, driver.rz().key());
    b->barrier();
  });
  auto b = make_local_bootstrap(0, 2, path, driver.rz().key());
  b->barrier();
  other.join();
  for (int fd : idle)
    ::close(fd);
}

// A connection that never finishes its hello is closed after
// run_hello_timeout_ms, not held for timeout_ms.
TEST(Rendezvous, SilentStrangerClosedAtHelloDeadline) {
  params::ScopedSet hello("run_hello_timeout_ms", "100");
  params::ScopedSet timeout("timeout_ms", "60000");
  Driver driver(1, false);
  const int fd = connect_raw(driver.rz().socket_path());
  ASSERT_GE(fd, 0);
  const auto start = Clock::now();
  pollfd p{fd, POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 20000), 1) << "the launcher kept a silent connection for 20 s";
  char byte;
  EXPECT_EQ(::read(fd, &byte, 1), 0);  // closed, nothing sent
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(90));
  ::close(fd);
}

// The run directory is named after its launcher (bootstrap/job_identity.hpp).
TEST(Rendezvous, RunDirectoryCarriesTheLaunchersIdentity) {
  Driver driver(1, false);
  const std::string& path = driver.rz().socket_path();
  const std::string expected = run_directory_parent() + "/grove-run-" + job::self().token() + "-";
  EXPECT_EQ(path.rfind(expected, 0), 0u) << path;
}

std::vector<FailureNotice> wait_for_notices(Bootstrap& b) {
  std::vector<FailureNotice> notices;
  for (int i = 0; i < 1000 && notices.empty(); ++i) {
    pollfd p{b.notice_fd(), POLLIN, 0};
    ::poll(&p, 1, 10);
    notices = b.poll_notices();
  }
  return notices;
}

TEST(Rendezvous, NotifyModeAnnouncesAndCompletesOverSurvivors) {
  Driver driver(4, true);
  const std::string& path = driver.rz().socket_path();
  auto r0 = make_local_bootstrap(0, 4, path, driver.rz().key());
  auto r2 = make_local_bootstrap(2, 4, path, driver.rz().key());
  driver.depart(1, "exited with code 1");
  for (Bootstrap* b : {r0.get(), r2.get()}) {
    const auto notices = wait_for_notices(*b);
    ASSERT_EQ(notices.size(), 1u);
    EXPECT_EQ(notices[0].rank, 1);
    EXPECT_EQ(notices[0].version, 1u);
    EXPECT_EQ(notices[0].how, "exited with code 1");
  }
  // A rank that connects after the departure is told about it too.
  auto r3 = make_local_bootstrap(3, 4, path, driver.rz().key());
  const auto late = wait_for_notices(*r3);
  ASSERT_EQ(late.size(), 1u);
  EXPECT_EQ(late[0].rank, 1);
  EXPECT_EQ(late[0].version, 1u);

  std::thread t2([&] { r2->allgather(blob_for(2, 5)); });
  std::thread t3([&] { r3->allgather(blob_for(3, 0)); });
  const auto all = r0->allgather(blob_for(0, 3));
  t2.join();
  t3.join();
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0], blob_for(0, 3));
  EXPECT_TRUE(all[1].empty());
  EXPECT_EQ(all[2], blob_for(2, 5));
  EXPECT_TRUE(all[3].empty());
  // The departed rank cannot come back.
  const std::string refused =
      error_of([&] { make_local_bootstrap(1, 4, path, driver.rz().key()); }, Errc::bootstrap);
  EXPECT_NE(refused.find("already left"), std::string::npos) << refused;
}

TEST(Rendezvous, AbortModeFailsCollectiveNamingTheDepartedRank) {
  Driver driver(2, false);
  auto r0 = make_local_bootstrap(0, 2, driver.rz().socket_path(), driver.rz().key());
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    driver.depart(1, "killed by signal 9 (Killed)");
  });
  const std::string message = error_of([&] { r0->barrier(); }, Errc::peer_failed);
  t.join();
  EXPECT_NE(message.find("rank 1 killed by signal 9 (Killed) before joining barrier #1"),
            std::string::npos)
      << message;
}

TEST(Rendezvous, CollectiveTimeoutNamesMissingRanks) {
  params::ScopedSet timeout("timeout_ms", "200");
  Driver driver(3, false);
  auto r0 = make_local_bootstrap(0, 3, driver.rz().socket_path(), driver.rz().key());
  const std::string message = error_of([&] { r0->allgather(blob_for(0, 1)); }, Errc::timeout);
  EXPECT_NE(message.find("rank(s) 1, 2 did not join"), std::string::npos) << message;
  EXPECT_NE(message.find("timeout_ms = 200"), std::string::npos) << message;
}

}  // namespace
}  // namespace grove::launch
