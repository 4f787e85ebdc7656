// When a writer on shared memory waits before reusing its slot
// (Group::await_slot_free, src/coll/shm/group.hpp): only for the readers
// of the last call that wrote the same slot, not for every member to have
// entered the call before. Two members driven from one thread, one call at
// a time, so a wait that should not happen shows as a timeout (timeout_ms
// is short) and one that must happen as exactly that timeout.

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "coll/shm/collectives.hpp"
#include "coll/shm/group.hpp"
#include "core/params.hpp"
#include "grove/error.hpp"
#include "support/memory_world.hpp"

namespace grove::shm {
namespace {

constexpr int kReuseMembers = 2;
constexpr size_t kReuseSlot = 4096;

class SlotReuse : public ::testing::Test {
 protected:
  void SetUp() override {
    const int fd = ::memfd_create("grove-shm-slot-reuse-test", 0);
    ASSERT_GE(fd, 0);
    const size_t length = segment_length(kReuseMembers, kReuseSlot);
    ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(length)), 0);
    for (int m = 0; m < kReuseMembers; ++m) {
      void* base = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      ASSERT_NE(base, MAP_FAILED);
      groups_.push_back(std::make_unique<Group>(
          m, kReuseMembers, world_.transport(m), [] { return -1; }, base, length, kReuseSlot));
    }
    ::close(fd);
  }

  // Member 1 sends one byte to the root (its slot's data), the root takes
  // it: a call in which the root writes nothing.
  void gather_to_root(std::byte value) {
    std::array<std::byte, 2> gathered{};
    const std::byte own{0};
    ASSERT_TRUE(gather(groups_[1].get(), std::span(&value, 1), {}, 0));
    ASSERT_TRUE(gather(groups_[0].get(), std::span(&own, 1), gathered, 0));
    EXPECT_EQ(gathered[1], value);
  }
  void root_bcast(std::byte value) {
    ASSERT_TRUE(bcast(groups_[0].get(), std::span(&value, 1), 0));
  }
  std::byte member_bcast() {
    std::byte value{0};
    EXPECT_TRUE(bcast(groups_[1].get(), std::span(&value, 1), 0));
    return value;
  }

  params::ScopedSet policy_{"wait_policy", "block"};
  params::ScopedSet timeout_{"timeout_ms", "300"};
  MemoryWorld world_{kReuseMembers};
  std::vector<std::unique_ptr<Group>> groups_;
};

TEST_F(SlotReuse, ARootsSecondBcastInARowDoesNotWaitForTheFirstsReaders) {
  gather_to_root(std::byte{7});  // call 1: the root wrote nothing
  root_bcast(std::byte{2});      // call 2: the root's slot of parity 0
  // Call 3 writes parity 1, last written by nobody: no wait, although
  // member 1 has not entered call 2 (the rule before waited for it).
  root_bcast(std::byte{3});
  EXPECT_EQ(member_bcast(), std::byte{2});
  EXPECT_EQ(member_bcast(), std::byte{3});
  EXPECT_EQ(groups_[0]->calls(), 3u);
  EXPECT_EQ(groups_[1]->calls(), 3u);
}

TEST_F(SlotReuse, AWriterWaitsForTheReadersOfItsSlotsLastCall) {
  gather_to_root(std::byte{7});  // call 1
  root_bcast(std::byte{2});      // call 2: parity 0
  root_bcast(std::byte{3});      // call 3: parity 1
  // Call 4 rewrites parity 0, whose readers (of call 2) member 1 has not
  // finished: the root must wait for member 1 to enter call 3, and here,
  // with member 1 never running, times out.
  try {
    root_bcast(std::byte{4});
    FAIL() << "the root rewrote a slot its reader had not read";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::timeout) << e.what();
  }
  // What the reader then finds is still call 2's and call 3's data.
  EXPECT_EQ(member_bcast(), std::byte{2});
  EXPECT_EQ(member_bcast(), std::byte{3});
}

}  // namespace
}  // namespace grove::shm
