// A shared-memory wait (Group::await_member) through the one wait loop, in
// one process: two Groups over two mappings of the same memory stand for
// two members. What ends the wait: the member entering, a departure of any
// member (named, whichever member is waited for), the timeout (naming the
// member and the call it is at); the transport is progressed meanwhile.

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <functional>
#include <memory>
#include <thread>

#include "coll/shm/group.hpp"
#include "core/params.hpp"
#include "support/memory_world.hpp"
#include "transport/forwarding.hpp"

namespace grove::shm {
namespace {

constexpr int kMembers = 3;
constexpr size_t kSlot = 4096;
const CallSignature kBarrier{coll::Collective::barrier, -1, 0};

// Counts progress calls; `on_progress` runs in each.
class CountingTransport final : public ForwardingTransport {
 public:
  using ForwardingTransport::ForwardingTransport;
  bool progress() override {
    ++progress_calls;
    if (on_progress) on_progress();
    return ForwardingTransport::progress();
  }
  int progress_calls = 0;
  std::function<void()> on_progress;
};

// One segment, mapped once per Group (each Group unmaps its own mapping).
class Segment {
 public:
  Segment() : fd_(::memfd_create("grove-shm-wait-test", 0)) {
    EXPECT_GE(fd_, 0);
    EXPECT_EQ(::ftruncate(fd_, static_cast<off_t>(length())), 0);
  }
  ~Segment() { ::close(fd_); }
  size_t length() const { return segment_length(kMembers, kSlot); }
  void* map() const {
    void* p = ::mmap(nullptr, length(), PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    EXPECT_NE(p, MAP_FAILED);
    return p;
  }

 private:
  int fd_;
};

struct Members {
  Segment segment;
  MemoryWorld world{kMembers};
  CountingTransport transport{world.transport(0)};
  int departed = -1;  // what first_departed reports
  std::unique_ptr<Group> me;
  std::unique_ptr<Group> other;  // member 1

  Members() {
    me = std::make_unique<Group>(
        0, kMembers, transport, [this] { return departed; }, segment.map(), segment.length(),
        kSlot);
    other = std::make_unique<Group>(
        1, kMembers, world.transport(1), [] { return -1; }, segment.map(), segment.length(), kSlot);
  }
};

TEST(ShmWait, ReturnsWhenTheMemberEnters) {
  params::ScopedSet policy("wait_policy", "block");
  Members m;
  std::thread member1([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    m.other->publish(1, kBarrier);
  });
  m.me->await_member(1, 1, kBarrier);
  member1.join();
}

// Member 2 departed while member 0 waits for member 1 (alive, late): the
// wait ends naming member 2, not the one it waited for.
TEST(ShmWait, AnyDepartedMemberIsNamed) {
  params::ScopedSet policy("wait_policy", "block");
  Members m;
  m.departed = 2;
  try {
    m.me->await_member(1, 1, kBarrier);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::peer_failed);
    EXPECT_STREQ(e.what(), "rank 0: barrier on shared memory (call 1): rank 2 departed");
  }
}

// The awaited member entered before the departure was seen: no error.
TEST(ShmWait, AMemberThatEnteredIsNotWaitedFor) {
  Members m;
  m.departed = 1;
  m.other->publish(1, kBarrier);
  m.me->await_member(1, 1, kBarrier);
}

TEST(ShmWait, TimeoutNamesTheMemberAndItsCall) {
  for (const char* policy : {"spin", "lazy", "block", "hybrid"}) {
    params::ScopedSet p("wait_policy", policy);
    params::ScopedSet t("timeout_ms", "30");
    Members m;
    m.other->publish(1, kBarrier);
    try {
      m.me->await_member(1, 2, kBarrier);
      ADD_FAILURE() << "no timeout under " << policy;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::timeout);
      EXPECT_STREQ(e.what(),
                   "rank 0: barrier on shared memory (call 2): timed out after 30 ms waiting for "
                   "rank 1 to enter it (it entered call 1)");
    }
  }
}

// Under every policy the wait progresses the transport (spinning rounds
// every 16th time, sleeping ones every time): here only progress makes the
// member enter, so the wait ends only if it progresses.
TEST(ShmWait, TheTransportIsProgressedWhileWaiting) {
  for (const char* policy : {"spin", "lazy", "block", "hybrid"}) {
    params::ScopedSet p("wait_policy", policy);
    Members m;
    m.transport.on_progress = [&] { m.other->publish(1, kBarrier); };
    m.me->await_member(1, 1, kBarrier);
    EXPECT_EQ(m.transport.progress_calls, 1) << policy;
  }
}

}  // namespace
}  // namespace grove::shm
