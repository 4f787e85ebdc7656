// The single-copy (CMA) path of the shared-memory collectives in one
// process (docs/shm.md, "Single copy"): reading process memory and its
// errors, the set-up probe and the members' agreement on it, the route a
// call takes, and the protocol between two Groups over one segment standing
// for two members (process_vm_readv of this process's own memory). Across
// processes: tests/mp/shm_cma.cpp.

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "coll/shm/cma.hpp"
#include "coll/shm/collectives.hpp"
#include "coll/shm/group.hpp"
#include "core/params.hpp"
#include "support/memory_world.hpp"

namespace grove::shm {
namespace {

// The pid of a process that has exited and been reaped: no process has it
// (until the kernel hands it out again, which it does not do at once).
pid_t gone_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

std::vector<std::byte> pattern(size_t n, int seed) {
  std::vector<std::byte> out(n);
  for (size_t i = 0; i < n; ++i)
    out[i] = static_cast<std::byte>((i * 131 + static_cast<size_t>(seed) * 7) & 0xff);
  return out;
}

TEST(ShmCmaRead, CopiesFromAProcessAndNamesEachFailure) {
  const std::vector<std::byte> source = pattern(10000, 1);
  std::vector<std::byte> to(source.size());
  PeerRead read = read_peer(::getpid(), reinterpret_cast<uintptr_t>(source.data()), to);
  EXPECT_EQ(read.error, 0);
  EXPECT_EQ(read.done, source.size());
  EXPECT_EQ(to, source);

  read = read_peer(::getpid(), 0, to);
  EXPECT_EQ(read.error, EFAULT);
  EXPECT_EQ(read.done, 0u);

  read = read_peer(gone_pid(), reinterpret_cast<uintptr_t>(source.data()), to);
  EXPECT_EQ(read.error, ESRCH);

  // Two pages, the second unmapped: the first is copied, then EFAULT.
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  auto* two = static_cast<std::byte*>(
      ::mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(two, MAP_FAILED);
  std::memset(two, 0x5a, page);
  ASSERT_EQ(::munmap(two + page, page), 0);
  std::vector<std::byte> across(2 * page);
  read = read_peer(::getpid(), reinterpret_cast<uintptr_t>(two), across);
  EXPECT_EQ(read.error, EFAULT);
  EXPECT_EQ(read.done, page);
  EXPECT_EQ(across[page - 1], std::byte{0x5a});
  ::munmap(two, page);

  EXPECT_EQ(read_error_text(EPERM), "Operation not permitted");
  EXPECT_EQ(read_error_text(-1), "short read (the rest is not mapped in that process)");
}

TEST(ShmCmaProbe, ReadsEveryPeerButItselfAndChecksTheWord) {
  const ProbeTarget me = own_probe_target();
  EXPECT_EQ(me.pid, ::getpid());
  EXPECT_NE(me.token, 0u);
  EXPECT_EQ(own_probe_target().token, me.token);  // one word per process

  std::vector<ProbeTarget> targets{me, me, me};
  ProbeResult r = probe_peers(targets, 1);
  EXPECT_EQ(r.ok, 1);

  // Member 2's pid is of no process.
  targets[2].pid = gone_pid();
  r = probe_peers(targets, 0);
  EXPECT_EQ(r.ok, 0);
  EXPECT_EQ(r.peer, 2);
  EXPECT_EQ(r.error, ESRCH);

  // Member 1's word holds another value than it said: another process.
  targets = {me, me};
  targets[1].token ^= 1;
  r = probe_peers(targets, 0);
  EXPECT_EQ(r.ok, 0);
  EXPECT_EQ(r.peer, 1);
  EXPECT_EQ(r.error, -2);

  // A pid that names no process at all, from a broken record.
  targets[1] = me;
  targets[1].pid = 0;
  r = probe_peers(targets, 0);
  EXPECT_EQ(r.peer, 1);
  EXPECT_EQ(r.error, ESRCH);
  // Its own target is never read: a broken one there does not matter.
  EXPECT_EQ(probe_peers(targets, 1).ok, 1);
}

// The agreement: on for all only when every member read every other; off
// for all otherwise, naming the first member that could not.
TEST(ShmCmaProbe, MembersAgreeOffWhenAnyOneCannotRead) {
  const ProbeResult ok{1, -1, 0, 0};
  std::vector<ProbeResult> results{ok, ok, ok, ok};
  CmaVerdict v = cma_verdict(results);
  EXPECT_TRUE(v.on);
  EXPECT_EQ(v.reason, "");

  results[2] = ProbeResult{0, 0, EPERM, 0};
  results[3] = ProbeResult{0, 1, ESRCH, 0};
  v = cma_verdict(results);
  EXPECT_FALSE(v.on);
  EXPECT_EQ(v.reason,
            "rank 2 cannot read rank 0's memory with process_vm_readv: Operation not permitted");

  results = {ok, ProbeResult{0, 0, -2, 0}};
  v = cma_verdict(results);
  EXPECT_FALSE(v.on);
  EXPECT_EQ(v.reason,
            "rank 1 cannot read rank 0's memory with process_vm_readv: it read another value than "
            "the one published (the ranks do not share a pid namespace?)");

  // A record that is neither 0 nor 1 (bytes from another process) is no yes.
  results = {ok, ProbeResult{7, 0, EPERM, 0}};
  EXPECT_FALSE(cma_verdict(results).on);
}

constexpr int kCmaMembers = 2;
constexpr size_t kCmaSlot = 4096;

// Two Groups over two mappings of one segment: members 0 and 1 of this
// process (each Group unmaps its own mapping).
struct CmaMembers {
  int fd = ::memfd_create("grove-shm-cma-test", 0);
  MemoryWorld world{kCmaMembers};
  std::unique_ptr<Group> group[kCmaMembers];

  explicit CmaMembers(bool single_copy, pid_t pid = ::getpid()) {
    const size_t length = segment_length(kCmaMembers, kCmaSlot);
    EXPECT_EQ(::ftruncate(fd, static_cast<off_t>(length)), 0);
    for (int m = 0; m < kCmaMembers; ++m) {
      void* base = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      EXPECT_NE(base, MAP_FAILED);
      group[m] = std::make_unique<Group>(
          m, kCmaMembers, world.transport(m), [] { return -1; }, base, length, kCmaSlot);
      if (single_copy) group[m]->enable_single_copy({pid, pid});
    }
  }
  ~CmaMembers() { ::close(fd); }
};

TEST(ShmCmaRoute, SingleCopyFromTheThresholdWhereAgreedElseTheSlots) {
  params::ScopedSet max("shm_max_bytes", "4096");
  CmaMembers with(true);
  CmaMembers without(false);
  const Group& g = *with.group[0];
  using Route = Group::Route;
  // From the threshold (64 KiB here): not bounded by shm_max_bytes or the slots.
  params::ScopedSet from("shm_cma_min_bytes", "65536");
  EXPECT_EQ(g.route(coll::Collective::bcast, size_t{1} << 30, size_t{1} << 30, true),
            Route::single_copy);
  EXPECT_EQ(g.route(coll::Collective::bcast, 65536, 65536, true), Route::single_copy);
  EXPECT_EQ(g.route(coll::Collective::bcast, 65535, 65535, true), Route::none);
  EXPECT_EQ(g.route(coll::Collective::bcast, 4096, 4096, true), Route::slots);
  // No single-copy form (reductions): the slots' limits only.
  EXPECT_EQ(g.route(coll::Collective::bcast, 65536, 65536, false), Route::none);
  // Not agreed at set-up: never single copy.
  EXPECT_EQ(without.group[0]->route(coll::Collective::bcast, 65536, 65536, true), Route::none);
  EXPECT_EQ(without.group[0]->route(coll::Collective::bcast, 4096, 4096, true), Route::slots);
  {
    params::ScopedSet off("shm_cma_min_bytes", "0");
    EXPECT_EQ(g.route(coll::Collective::bcast, size_t{1} << 20, size_t{1} << 20, true),
              Route::none);
    EXPECT_EQ(g.route(coll::Collective::bcast, 16, 16, true), Route::slots);
  }
  params::ScopedSet low("shm_cma_min_bytes", "16");
  EXPECT_EQ(g.route(coll::Collective::bcast, 16, 16, true), Route::single_copy);
  EXPECT_EQ(g.route(coll::Collective::bcast, 15, 15, true), Route::slots);
}

TEST(ShmCmaRoute, ScatterAndAlltoallStartAtTheBlockThreshold) {
  CmaMembers with(true);
  const Group& g = *with.group[0];
  using Route = Group::Route;
  params::ScopedSet message("shm_cma_min_bytes", "1024");
  params::ScopedSet block("shm_cma_min_block_bytes", "256");
  for (coll::Collective c : {coll::Collective::scatter, coll::Collective::alltoall}) {
    EXPECT_EQ(g.route(c, 256, 256, true), Route::single_copy);
    EXPECT_EQ(g.route(c, 255, 255, true), Route::slots);
    EXPECT_EQ(shm::cma_param_name(c), "shm_cma_min_block_bytes");
  }
  for (coll::Collective c :
       {coll::Collective::bcast, coll::Collective::gather, coll::Collective::allgather,
        coll::Collective::reduce, coll::Collective::allreduce}) {
    EXPECT_EQ(g.route(c, 256, 256, true), Route::slots);
    EXPECT_EQ(g.route(c, 1024, 1024, true), Route::single_copy);
    EXPECT_EQ(shm::cma_param_name(c), "shm_cma_min_bytes");
  }
  params::ScopedSet off("shm_cma_min_block_bytes", "0");
  EXPECT_EQ(g.route(coll::Collective::scatter, 256, 256, true), Route::slots);
  EXPECT_EQ(g.route(coll::Collective::scatter, size_t{1} << 20, size_t{1} << 20, true),
            Route::none);
}

// A bcast, then an allgather, on the single-copy path between the two
// members (threads), then a slot call: the numbers interleave.
TEST(ShmCmaProtocol, CopiesOnceAndTheOwnerWaitsForConsumption) {
  params::ScopedSet policy("wait_policy", "block");
  params::ScopedSet from("shm_cma_min_bytes", "1024");
  CmaMembers m(true);
  const size_t bytes = 300000;  // past the slots
  const std::vector<std::byte> message = pattern(bytes, 3);
  std::vector<std::byte> root_buffer = message;
  std::vector<std::byte> reader_buffer(bytes);
  std::vector<std::byte> gathered[kCmaMembers];
  std::vector<std::byte> small[kCmaMembers];
  auto member = [&](int r) {
    std::vector<std::byte>& mine = r == 1 ? root_buffer : reader_buffer;
    EXPECT_TRUE(bcast(m.group[r].get(), mine, 1));
    const std::vector<std::byte> block = pattern(2048, 10 + r);
    gathered[r].resize(2 * 2048);
    EXPECT_TRUE(allgather(m.group[r].get(), block, gathered[r]));
    small[r] = pattern(100, 20);
    if (r != 0) std::fill(small[r].begin(), small[r].end(), std::byte{0});
    EXPECT_TRUE(bcast(m.group[r].get(), small[r], 0));
  };
  std::thread other(member, 1);
  member(0);
  other.join();
  EXPECT_EQ(reader_buffer, message);
  EXPECT_EQ(root_buffer, message);
  for (int r = 0; r < kCmaMembers; ++r) {
    for (int b = 0; b < kCmaMembers; ++b) {
      const std::vector<std::byte> want = pattern(2048, 10 + b);
      EXPECT_TRUE(
          std::equal(want.begin(), want.end(), gathered[r].begin() + static_cast<long>(b) * 2048))
          << r << " " << b;
    }
    EXPECT_EQ(small[r], pattern(100, 20));
  }
  // Two calls each for the single-copy bcast and allgather, one for the slot.
  EXPECT_EQ(m.group[0]->calls(), 5u);
  EXPECT_EQ(m.group[1]->calls(), 5u);
}

const CallSignature kBcast{coll::Collective::bcast, 0, 200};

template <class Body>
Error error_of(Body&& body) {
  try {
    body();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error";
  return Error(Errc::internal, "");
}

TEST(ShmCmaProtocol, AReadNamesTheMemberTheCallAndTheCause) {
  std::vector<std::byte> owned = pattern(200, 4);
  std::vector<std::byte> to(200);
  {
    // Another length than the reader's call (sizes agree modulo 2^24 only).
    CmaMembers m(true);
    m.group[0]->publish_buffer(1, owned.data(), 100);
    m.group[0]->publish(1, kBcast);
    m.group[1]->await_member(0, 1, kBcast);
    const Error e = error_of([&] { m.group[1]->pull(0, 1, kBcast, 200, 0, to); });
    EXPECT_EQ(e.code(), Errc::mismatch);
    EXPECT_STREQ(e.what(),
                 "rank 1: bcast(root 0, 200 B) on shared memory (call 1): rank 0 published a "
                 "buffer of 100 B for it, this rank expects 200 B; every rank must call the same "
                 "collectives with matching sizes");
  }
  {
    // The owner's process is gone: departed, as the failure notices say.
    CmaMembers m(true, gone_pid());
    m.group[0]->publish_buffer(1, owned.data(), 200);
    m.group[0]->publish(1, kBcast);
    const Error e = error_of([&] { m.group[1]->pull(0, 1, kBcast, 200, 0, to); });
    EXPECT_EQ(e.code(), Errc::peer_failed);
    EXPECT_STREQ(e.what(),
                 "rank 1: bcast(root 0, 200 B) on shared memory (call 1): rank 0 departed (its "
                 "process is gone: process_vm_readv of its buffer: No such process)");
  }
  {
    // A buffer that is not mapped in the owner.
    CmaMembers m(true);
    m.group[0]->publish_buffer(1, nullptr, 200);
    m.group[0]->publish(1, kBcast);
    const Error e = error_of([&] { m.group[1]->pull(0, 1, kBcast, 200, 0, to); });
    EXPECT_EQ(e.code(), Errc::transport);
    EXPECT_EQ(std::string(e.what()),
              fmt::format("rank 1: bcast(root 0, 200 B) on shared memory (call 1): reading 200 B "
                          "of rank 0's buffer (pid {}, address 0x0) with process_vm_readv: Bad "
                          "address after 0 B",
                          ::getpid()));
  }
}

// An owner that leaves a single-copy call by an exception withdraws its
// buffers before the caller can reuse them: a reader that has not copied
// yet gets Errc::cancelled, not bytes of a buffer its owner gave up.
TEST(ShmCmaProtocol, AnOwnerThatFailsWithdrawsItsBuffer) {
  std::vector<std::byte> owned = pattern(200, 5);
  std::vector<std::byte> to(200);
  CmaMembers m(true);
  m.group[0]->publish_buffer(1, owned.data(), 200);
  m.group[0]->publish(1, kBcast);
  // Before the owner fails, a read delivers the bytes.
  m.group[1]->pull(0, 1, kBcast, 200, 0, to);
  EXPECT_EQ(to, owned);
  // A call that returns normally lends without withdrawing.
  { const Group::Lending lending(*m.group[0]); }
  m.group[1]->pull(0, 1, kBcast, 200, 0, to);
  EXPECT_EQ(to, owned);
  const Error failed = error_of([&] {
    const Group::Lending lending(*m.group[0]);
    throw Error(Errc::timeout, "the owner's wait for consumption timed out");
  });
  EXPECT_EQ(failed.code(), Errc::timeout);
  std::fill(owned.begin(), owned.end(), std::byte{0});  // the caller reuses it
  const Error e = error_of([&] { m.group[1]->pull(0, 1, kBcast, 200, 0, to); });
  EXPECT_EQ(e.code(), Errc::cancelled);
  EXPECT_STREQ(e.what(),
               "rank 1: bcast(root 0, 200 B) on shared memory (call 1): rank 0 withdrew its "
               "buffer (its call failed) before this rank had copied it");
  EXPECT_EQ(to, pattern(200, 5));  // nothing of the reused buffer delivered
}

}  // namespace
}  // namespace grove::shm
