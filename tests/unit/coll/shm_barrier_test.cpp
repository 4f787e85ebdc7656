// The shared-memory barrier's two forms (src/coll/shm/barrier.cpp), three
// members as three threads over three mappings of one segment: no member
// leaves a barrier before every member entered it, round after round, and
// both forms leave the call numbering where the next call expects it. Then
// which form `auto` takes.

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "coll/shm/collectives.hpp"
#include "coll/shm/group.hpp"
#include "core/params.hpp"
#include "support/memory_world.hpp"

namespace grove::shm {
namespace {

constexpr int kBarrierMembers = 3;
constexpr size_t kBarrierSlot = 4096;

void run_barrier_rounds(const std::string& form) {
  params::ScopedSet policy("wait_policy", "block");
  params::ScopedSet chosen("shm_barrier", form);
  const int fd = ::memfd_create("grove-shm-barrier-test", 0);
  ASSERT_GE(fd, 0);
  const size_t length = segment_length(kBarrierMembers, kBarrierSlot);
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(length)), 0);
  MemoryWorld world(kBarrierMembers);
  std::vector<std::unique_ptr<Group>> groups;
  for (int m = 0; m < kBarrierMembers; ++m) {
    void* base = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ASSERT_NE(base, MAP_FAILED);
    groups.push_back(std::make_unique<Group>(
        m, kBarrierMembers, world.transport(m), [] { return -1; }, base, length, kBarrierSlot));
  }
  ::close(fd);

  constexpr int kRounds = 200;
  std::atomic<int> arrived{0};
  std::atomic<int> early{0};  // a member that left before everyone entered
  std::vector<std::thread> threads;
  for (int m = 0; m < kBarrierMembers; ++m) {
    threads.emplace_back([&, m] {
      for (int round = 1; round <= kRounds; ++round) {
        arrived.fetch_add(1);
        barrier(*groups[m]);
        if (arrived.load() < round * kBarrierMembers) early.fetch_add(1);
        // A small call right after: the numbering of both forms must agree.
        std::byte value{static_cast<unsigned char>(round)};
        bcast(groups[m].get(), std::span(&value, 1), 0);
        if (value != std::byte{static_cast<unsigned char>(round)}) early.fetch_add(1000);
      }
    });
  }
  for (std::thread& t : threads)
    t.join();
  EXPECT_EQ(early.load(), 0) << form;
  EXPECT_EQ(arrived.load(), kRounds * kBarrierMembers);
  // The flags form takes one call number, the release form two; the bcast one.
  const uint64_t per_round = form == "release" ? 3 : 2;
  for (const auto& g : groups)
    EXPECT_EQ(g->calls(), kRounds * per_round) << form;
}

TEST(ShmBarrier, FlagsFormLetsNoMemberLeaveEarly) {
  run_barrier_rounds("flags");
}

TEST(ShmBarrier, ReleaseFormLetsNoMemberLeaveEarly) {
  run_barrier_rounds("release");
}

TEST(ShmBarrier, AutoTakesTheReleaseForm) {
  EXPECT_TRUE(release_barrier_for("auto"));
  EXPECT_TRUE(release_barrier_for("release"));
  EXPECT_FALSE(release_barrier_for("flags"));
}

}  // namespace
}  // namespace grove::shm
