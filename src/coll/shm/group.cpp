#include "coll/shm/group.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "coll/shm/cma.hpp"
#include "coll/shm/collectives.hpp"
#include "core/futex.hpp"
#include "core/params.hpp"
#include "grove/error.hpp"
#include "sched/handshake_fence.hpp"
#include "sched/wait_loop.hpp"

namespace grove::shm {
namespace {

const params::BytesParam shm_max_bytes{
    "shm_max_bytes", 256 * 1024, 0, uint64_t{1} << 23,
    "blocking collectives on one host whose message (block) is at most this many bytes run "
    "through the communicator's shared-memory segment instead of messages (0: only barriers; "
    "shm_collectives=false: none)"};

constexpr uint64_t kSignatureMask = (uint64_t{1} << Group::kSignatureBits) - 1;

size_t round_up(size_t n, size_t unit) {
  return (n + unit - 1) / unit * unit;
}

size_t control_bytes(int members) {
  const auto n = static_cast<size_t>(members);
  return round_up(sizeof(SegmentHeader) + sizeof(ControlLine) * n + sizeof(InlineLine) * 2 * n,
                  4096);
}

}  // namespace

std::string CallSignature::describe() const {
  if (collective == coll::Collective::barrier) return "barrier";
  if (root >= 0)
    return fmt::format("{}(root {}, {} B)", coll::collective_name(collective), root, bytes);
  return fmt::format("{}({} B)", coll::collective_name(collective), bytes);
}

namespace {

// The inverse of pack(), modulo its field widths (for messages only).
CallSignature unpack(uint64_t packed) {
  CallSignature s;
  s.collective = static_cast<coll::Collective>((packed >> 36) & 0xf);
  s.root = static_cast<int>((packed >> 24) & 0xfff) - 1;
  s.bytes = packed & 0xffffff;
  return s;
}

}  // namespace

size_t segment_length(int members, size_t slot_bytes) {
  return control_bytes(members) + 2 * slot_bytes * static_cast<size_t>(members);
}

Group::Group(int rank, int size, Transport& transport, FirstDepartedFn first_departed, void* base,
             size_t length, size_t slot_bytes)
    : transport_(transport),
      first_departed_(std::move(first_departed)),
      base_(base),
      length_(length),
      slot_bytes_(slot_bytes),
      rank_(rank),
      size_(size),
      lines_(reinterpret_cast<ControlLine*>(static_cast<std::byte*>(base) + sizeof(SegmentHeader))),
      inlines_(reinterpret_cast<InlineLine*>(lines_ + size)),
      slots_(static_cast<std::byte*>(base) + control_bytes(size)) {
  // Registers this process for the sleepers' barrier before its first
  // publish relies on it (publish()).
  sched::asymmetric_fences();
}

Group::~Group() {
  ::munmap(base_, length_);
}

Group::Route Group::route(coll::Collective collective, size_t slot_need, size_t message_bytes,
                          bool has_single_copy) const {
  const size_t cma_from = cma_min_bytes(collective);
  const bool cma = has_single_copy && single_copy() && cma_from > 0;
  if (cma && message_bytes >= cma_from) return Route::single_copy;
  if (message_bytes > shm_max_bytes.get()) return Route::none;
  if (slot_need <= slot_bytes_) return Route::slots;
  // Too many blocks for a slot (scatter or alltoall of N x 64 KiB at N = 8):
  // the single copy still moves each byte once, where the schedule path
  // would take it through UCX.
  return cma ? Route::single_copy : Route::none;
}

void Group::wake_sleepers() {
  ControlLine& line = lines_[rank_];
  line.wake.fetch_add(1, std::memory_order_seq_cst);
  futex_wake_shared(&line.wake);
}

void Group::await_all(uint64_t call, const CallSignature& signature) {
  for (int m = 0; m < size_; ++m) {
    if (m != rank_) await_member(m, call, signature);
  }
}

namespace {

// A published buffer's length once its owner withdrew it (no buffer has it).
constexpr uint64_t kWithdrawn = ~uint64_t{0};

}  // namespace

void Group::publish_buffer(uint64_t call, const void* address, size_t bytes) {
  ControlLine::Buffer& buffer = lines_[rank_].buffer[call & 1];
  // Relaxed: publish()'s store of `entered` orders them before it.
  buffer.address.store(reinterpret_cast<uintptr_t>(address), std::memory_order_relaxed);
  buffer.bytes.store(bytes, std::memory_order_relaxed);
}

void Group::withdraw_buffers() {
  // Release, and before the caller can write the buffer again: a reader
  // that copied any byte written after this reads kWithdrawn afterwards.
  for (ControlLine::Buffer& buffer : lines_[rank_].buffer)
    buffer.bytes.store(kWithdrawn, std::memory_order_release);
}

void Group::pull(int member, uint64_t call, const CallSignature& signature, size_t published,
                 size_t offset, std::span<std::byte> to) {
  const ControlLine::Buffer& buffer = lines_[member].buffer[call & 1];
  const uint64_t address = buffer.address.load(std::memory_order_relaxed);
  const uint64_t length = buffer.bytes.load(std::memory_order_relaxed);
  auto withdrawn = [&] {
    return Error(Errc::cancelled,
                 fmt::format("rank {}: {} on shared memory (call {}): rank {} withdrew its buffer "
                             "(its call failed) before this rank had copied it",
                             rank_, signature.describe(), call, member));
  };
  if (length == kWithdrawn) throw withdrawn();
  // Bytes from another process: the signature compares sizes modulo 2^24
  // only, and a buffer of another length is another call.
  if (length != published) {
    throw Error(Errc::mismatch,
                fmt::format("rank {}: {} on shared memory (call {}): rank {} published a buffer of "
                            "{} B for it, this rank expects {} B; every rank must call the same "
                            "collectives with matching sizes",
                            rank_, signature.describe(), call, member, length, published));
  }
  const PeerRead read = read_peer(pids_[static_cast<size_t>(member)], address + offset, to);
  if (read.error == 0) {
    // The owner may have left the call (and rewritten the buffer) while this
    // rank copied: then it withdrew the buffer first, and the copy is not
    // delivered.
    std::atomic_thread_fence(std::memory_order_acquire);
    if (buffer.bytes.load(std::memory_order_relaxed) == kWithdrawn) throw withdrawn();
    return;
  }
  if (read.error == ESRCH) {
    throw Error(Errc::peer_failed,
                fmt::format("rank {}: {} on shared memory (call {}): rank {} departed (its "
                            "process is gone: process_vm_readv of its buffer: {})",
                            rank_, signature.describe(), call, member, std::strerror(ESRCH)));
  }
  throw Error(
      Errc::transport,
      fmt::format("rank {}: {} on shared memory (call {}): reading {} B of rank {}'s buffer "
                  "(pid {}, address {:#x}) with process_vm_readv: {} after {} B",
                  rank_, signature.describe(), call, to.size(), member,
                  pids_[static_cast<size_t>(member)], address + offset, read_error_text(read.error),
                  read.done));
}

std::byte* Group::scratch(size_t bytes) {
  if (scratch_.size() < bytes) scratch_.resize(bytes);
  return scratch_.data();
}

void Group::check_signature_word(int member, uint64_t call, const CallSignature& signature,
                                 uint64_t word) const {
  // A member two calls ahead has overwritten this parity's word: nothing to
  // compare then (it agreed on this call, or a member it waited for did not).
  if ((word >> kSignatureBits) != (call & kCallMask)) return;
  if ((word & kSignatureMask) == signature.pack()) return;
  throw Error(
      Errc::mismatch,
      fmt::format("rank {}: {} on shared memory (call {}): rank {} entered {} as that call; "
                  "every rank must call the same collectives in the same order",
                  rank_, signature.describe(), call, member,
                  unpack(word & kSignatureMask).describe()));
}

namespace {

const params::IntParam shm_sleep_look_us{
    "shm_sleep_look_us", 1000, 1, 1000000,
    "a shared-memory wait asleep on a member's futex first sleeps at most this long "
    "(microseconds) without the membarrier that makes a missed wake-up impossible; the member's "
    "publish ends it at once, and a wake-up missed by a publisher racing the sleep costs at most "
    "this (docs/shm.md)"};

}  // namespace

void Group::sleep_on(int member, uint64_t call, int64_t max_us) {
  ControlLine& line = lines_[member];
  // The mirror image of publish(): count, fence, look. This side's fence
  // is full (the read-modify-write); the publisher's is only a compiler
  // barrier, so a publisher whose `entered` store was still on its way when
  // it read the count may miss this sleeper. First a look of
  // shm_sleep_look_us: its end finds such a call. Only a look that ran out
  // unwoken goes on, after making every member pass a barrier (membarrier:
  // an interrupt of every core running one, about 30 us here), after which
  // no wake-up is missed. The default look is the cadence's longest sleep
  // (shm_wake_interval_us), so by default no sleep pays the barrier and a
  // missed wake-up costs at most that (docs/shm.md, "Waiting"). Were the
  // barrier refused by the kernel, the same bound holds.
  line.sleepers.fetch_add(1, std::memory_order_seq_cst);
  const int64_t look = std::min<int64_t>(shm_sleep_look_us.get(), max_us);
  uint32_t seen = line.wake.load(std::memory_order_seq_cst);
  if (line.entered.load(std::memory_order_seq_cst) < call) {
    futex_wait_shared(&line.wake, seen, std::chrono::microseconds(look));
    // Only a look that ran out unwoken goes on: a wake-up (of this call or
    // an earlier one) returns to the wait loop, which looks again.
    if (max_us > look && line.wake.load(std::memory_order_acquire) == seen &&
        line.entered.load(std::memory_order_acquire) < call) {
      sched::sleep_fence();
      seen = line.wake.load(std::memory_order_seq_cst);
      if (line.entered.load(std::memory_order_seq_cst) < call)
        futex_wait_shared(&line.wake, seen, std::chrono::microseconds(max_us - look));
    }
  }
  line.sleepers.fetch_sub(1, std::memory_order_seq_cst);
}

// The one wait loop (sched/wait_loop.hpp) with the local-memory cadence:
// the poll is `ready` (a load of a word the member writes), the sleep a
// futex wait on the member's control line. The transport is progressed as
// the cadence says: non-blocking calls and protocols in flight (of any
// communicator; a fence's rendezvous, say) may need this rank's progress
// while it waits here, and their messages do not end a futex sleep
// (docs/wait.md). `check` runs once per round, before the departure check.
template <class Ready, class Check>
void Group::wait_for(int member, uint64_t call, const CallSignature& signature, Ready ready,
                     Check check) {
  struct Waiter : sched::WaiterBase {
    Group& group;
    int member;
    uint64_t call;
    const CallSignature& signature;
    Ready is_ready;
    Check extra_check;
    bool ready() const { return is_ready(); }
    void check() {
      extra_check();
      group.check_departures(member, call, signature);
    }
    bool progress() { return group.transport_.progress(); }
    void sleep(std::chrono::microseconds max) { group.sleep_on(member, call, max.count()); }
  };
  const sched::WaitOptions options = sched::wait_options_from_params();
  Waiter waiter{{}, *this, member, call, signature, ready, check};
  if (sched::wait_loop(waiter, options, sched::local_memory_cadence(options))) return;
  throw Error(Errc::timeout,
              fmt::format("rank {}: {} on shared memory (call {}): timed out after {} ms "
                          "waiting for rank {} to enter it (it entered call {})",
                          rank_, signature.describe(), call, options.timeout.count(), member,
                          lines_[member].entered.load()));
}

void Group::wait_entered(int member, uint64_t call, const CallSignature& signature) {
  wait_for(
      member, call, signature, [&] { return entered(member, call); }, [] {});
}

// The wait for a member's inline line (await_data): the poll is a load of
// that line, which the member writes before it enters. A member that
// entered the call without writing it entered another call: its signature
// then says which (check_signature throws). A sleep waits for `entered`,
// which comes after the line.
void Group::wait_inline(int member, uint64_t call, const CallSignature& signature) {
  const InlineLine& line = inline_line(member, call);
  auto written = [&] { return line.call.load(std::memory_order_acquire) >= call; };
  wait_for(member, call, signature, written, [&] {
    if (!entered(member, call) || written()) return;
    check_signature(member, call, signature);
    throw Error(Errc::internal,
                fmt::format("rank {}: {} on shared memory (call {}): rank {} entered the call "
                            "without its data",
                            rank_, signature.describe(), call, member));
  });
}

// Any member departed, not only the one waited for: a call that waits for a
// live member which itself waits for a departed one would otherwise wait
// out timeout_ms and blame the live one. The awaited member may have
// entered just before (a member that finished the call and exited): then
// the wait ends normally.
void Group::check_departures(int member, uint64_t call, const CallSignature& signature) {
  if (!first_departed_) return;
  const int gone = first_departed_();
  if (gone < 0 || entered(member, call)) return;
  throw Error(Errc::peer_failed,
              fmt::format("rank {}: {} on shared memory (call {}): rank {} departed", rank_,
                          signature.describe(), call, gone));
}

}  // namespace grove::shm
