#pragma once
// The shared-memory side of a communicator whose ranks all run on one host.
// One segment, mapped by every member, holds per member a control line and
// two data slots. Small blocking collectives run through it without
// messages: a member writes its contribution into its own slot, publishes
// the call's number in its control line, and readers copy out of the slots
// of the members they wait for (the approach of MPICH's POSIX collectives
// and Open MPI's coll/sm). The schedule path (UCX) serves every other call.
//
// Invariants
// - Calls through a group are numbered 1, 2, ... in the same order on
//   every member (collectives are called in the same order everywhere; the
//   choice of this path depends only on the call's shape and parameters).
// - A member's `entered` word is k once it has entered call k; a member that
//   writes its slot in call k does so before publishing k. Entering call k
//   implies having finished call k-1 (calls are blocking).
// - Call k uses slot buffer (and inline line) k % 2. A writer of call k
//   first waits until every member has entered call j+1, where j is the
//   last call before k in which it wrote that buffer: then every reader of
//   call j is done with it. j is usually k-2 (then the wait is for call
//   k-1); a call that wrote nothing in between (a barrier, a call whose
//   data came from another member) leaves j further back, so a root's
//   second rooted call in a row does not wait for members still finishing
//   the call before (the readers of a bcast after an allreduce, say).
// - A call on the single-copy path (CMA, shm/cma.hpp) takes two numbers
//   (a reduction three: reduce_single_copy.hpp):
//   in call k the owners of data publish their buffer's address and length,
//   readers copy straight out of the owners' buffers, and a member enters
//   call k+1 ("consumed") once it has copied all it reads; an owner returns
//   only when every reader has entered k+1 (its buffer stays valid until
//   then). Such a call uses no slot, so the rule above holds across it.
// - Which path a call takes (none, slots, single copy) depends only on its
//   shape, the parameters and what every member agreed on when the segment
//   was made (route()), so every member decides alike.

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "coll/collective.hpp"
#include "coll/shm/route.hpp"
#include "sched/handshake_fence.hpp"
#include "transport/transport.hpp"

namespace grove::shm {

// What a member says call k is; members that wait for it compare it with
// their own and report a difference as Errc::mismatch, by name.
struct CallSignature {
  coll::Collective collective = coll::Collective::other;
  int root = -1;     // -1: the collective has no root
  size_t bytes = 0;  // the call's block size in bytes

  // 40 bits: collective (4), root + 1 (12, modulo), bytes (24, modulo).
  // Inline: a call's publish and checks pack its (constant) signature.
  uint64_t pack() const {
    const auto c = static_cast<uint64_t>(collective) & 0xf;
    const auto r = static_cast<uint64_t>(root + 1) & 0xfff;
    const auto b = static_cast<uint64_t>(bytes) & 0xffffff;
    return c << 36 | r << 24 | b;
  }
  std::string describe() const;  // "bcast(root 0, 64 B)"
};

// One cache line per member, written only by that member.
struct alignas(64) ControlLine {
  std::atomic<uint64_t> entered{0};  // the last call this member entered
  // By call parity: (call number mod 2^24) << 40 | CallSignature::pack().
  std::atomic<uint64_t> signature[2] = {0, 0};
  std::atomic<uint32_t> wake{0};      // futex word, bumped when sleepers wait
  std::atomic<uint32_t> sleepers{0};  // members blocked on `wake`
  // Single-copy path, by call parity: the buffer this member owns in that
  // call, in its own address space; written before `entered`, read after
  // it (a reduction publishes its operand in one call and its combined
  // chunk in the next while others may still read the first).
  struct Buffer {
    std::atomic<uint64_t> address{0};
    std::atomic<uint64_t> bytes{0};
  } buffer[2];
};
static_assert(sizeof(ControlLine) == 64);

// One cache line per member and call parity, written only by that member: a
// contribution of at most kInlineBytes travels here instead of the slot,
// beside the call number and signature its readers check, so that one cache
// miss brings all three (through the slot a reader misses on the control
// line, then on the slot). Written before `entered`, like a slot.
inline constexpr size_t kInlineBytes = 48;
struct alignas(64) InlineLine {
  std::atomic<uint64_t> call{0};       // the call whose data this is; stored last
  std::atomic<uint64_t> signature{0};  // Group::signature_word of that call
  std::byte data[kInlineBytes];
};
static_assert(sizeof(InlineLine) == 64);

// The segment's first cache line: members that open it check every field.
struct alignas(64) SegmentHeader {
  uint64_t magic = 0;
  uint32_t version = 0;
  uint32_t members = 0;
  uint64_t slot_bytes = 0;
};

inline constexpr uint64_t kSegmentMagic = 0x6d68732d65766f72;  // "rove-shm"
inline constexpr uint32_t kSegmentVersion = 3;  // 2: the single-copy fields; 3: inline lines

// Bytes of a segment for `members` ranks with slots of `slot_bytes`.
size_t segment_length(int members, size_t slot_bytes);

class Group {
 public:
  // The lowest member of the communicator that departed, or -1 (failure
  // notices read first, at most once per millisecond: called every round
  // of a wait).
  using FirstDepartedFn = std::function<int()>;

  // Takes over the mapping [base, base + length) laid out by segment_length.
  // `transport` is progressed while waiting (other calls in flight need it).
  Group(int rank, int size, Transport& transport, FirstDepartedFn first_departed, void* base,
        size_t length, size_t slot_bytes);
  ~Group();
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  size_t slot_bytes() const { return slot_bytes_; }

  // How a call runs on this segment (coll/shm/route.hpp).
  using Route = shm::Route;
  // The route of a call of `collective` that writes `slot_need` bytes into a
  // slot on the slot path and moves messages (blocks) of `message_bytes`;
  // `has_single_copy`: the collective has a single-copy form. Single copy
  // from the collective's threshold (cma_min_bytes: shm_cma_min_bytes or
  // shm_cma_min_block_bytes) when the members agreed that CMA works
  // (regardless of shm_max_bytes and the slots), else the slots if the call
  // fits them (shm_max_bytes), else (a message within shm_max_bytes whose
  // blocks together overflow a slot) single copy again where CMA works.
  // Depends only on its arguments, the
  // parameters and the members' agreement, so every member decides alike.
  Route route(coll::Collective collective, size_t slot_need, size_t message_bytes,
              bool has_single_copy) const;
  bool fits(coll::Collective collective, size_t slot_need, size_t message_bytes,
            bool has_single_copy) const {
    return route(collective, slot_need, message_bytes, has_single_copy) != Route::none;
  }
  // Whether the members agreed, when the segment was made, that each can
  // read every other's memory (process_vm_readv), and the pids to read.
  bool single_copy() const { return !pids_.empty(); }
  void enable_single_copy(std::vector<pid_t> pids) { pids_ = std::move(pids); }

  // The next call's number.
  uint64_t begin() { return ++calls_; }
  // Calls begun so far (a two-phase reduction counts two).
  uint64_t calls() const { return calls_; }
  // Before writing the own slot or inline line in call k: waits until every
  // reader of the last earlier call that wrote them is done (see the
  // invariants), and records call k as their last writer.
  void await_slot_free(uint64_t call, const CallSignature& signature) {
    const uint64_t previous = claim_slot(call);
    if (previous == 0) return;
    for (int m = 0; m < size_; ++m) {
      if (m != rank_ && !entered(m, previous + 1)) wait_entered(m, previous + 1, signature);
    }
  }
  // Records call k as the last writer of the own slot and inline line of
  // its parity without waiting, for a caller that knows every member has
  // entered call k-1; returns the call that wrote them before (0: none).
  uint64_t claim_slot(uint64_t call) {
    uint64_t& last = last_write_[call & 1];
    const uint64_t previous = last;
    last = call;
    return previous;
  }
  std::byte* own_slot(uint64_t call) { return slot_of(rank_, call); }
  const std::byte* slot(int member, uint64_t call) { return slot_of(member, call); }

  // A member's contribution of `bytes` to `call` (the same value on every
  // member: it follows from the call's shape): where the member writes it
  // (after await_slot_free), how it publishes it, and where a reader finds
  // it once published. Up to kInlineBytes in the member's inline line,
  // else in its slot.
  std::byte* own_data(uint64_t call, size_t bytes) {
    return bytes <= kInlineBytes ? inline_line(rank_, call).data : own_slot(call);
  }
  void publish_data(uint64_t call, const CallSignature& signature, size_t bytes) {
    if (bytes <= kInlineBytes) {
      InlineLine& line = inline_line(rank_, call);
      line.signature.store(signature_word(call, signature), std::memory_order_relaxed);
      line.call.store(call, std::memory_order_release);
    }
    publish(call, signature);
  }
  // await_member, then the member's data; inline, the line's own call
  // number and signature are waited for and checked instead.
  const std::byte* await_data(int member, uint64_t call, const CallSignature& signature,
                              size_t bytes) {
    if (bytes > kInlineBytes) {
      await_member(member, call, signature);
      return slot(member, call);
    }
    InlineLine& line = inline_line(member, call);
    if (line.call.load(std::memory_order_acquire) != call) wait_inline(member, call, signature);
    if (line.signature.load(std::memory_order_relaxed) != signature_word(call, signature))
        [[unlikely]]
      check_signature_word(member, call, signature, line.signature.load());
    return line.data;
  }
  // This member has entered `call` (its slot's data, if any, written).
  void publish(uint64_t call, const CallSignature& signature) {
    ControlLine& line = lines_[rank_];
    line.signature[call & 1].store(signature_word(call, signature), std::memory_order_relaxed);
    // Store, fence, load; sleep_on makes the mirror-image accesses: either
    // a sleeper that counted itself before this load is woken, or it reads
    // `entered` after this store. The fence is asymmetric
    // (sched/handshake_fence.hpp): a full fence here would wait for this
    // call's slot and control-line stores to reach other cores, most of a
    // small call's time on the member that only writes (a bcast root).
    line.entered.store(call, std::memory_order_release);
    sched::publish_fence();
    if (line.sleepers.load(std::memory_order_relaxed) != 0) [[unlikely]]
      wake_sleepers();
  }
  // Waits until `member` has entered `call`; Errc::mismatch if it entered a
  // different call, Errc::peer_failed naming the first member that departed
  // (whichever member is waited for), Errc::timeout after timeout_ms.
  void await_member(int member, uint64_t call, const CallSignature& signature) {
    if (!entered(member, call)) wait_entered(member, call, signature);
    check_signature(member, call, signature);
  }
  // await_member for every other member.
  void await_all(uint64_t call, const CallSignature& signature);

  // Single copy: the buffer this member owns in `call` (before publishing
  // it).
  void publish_buffer(uint64_t call, const void* address, size_t bytes);
  // The address this member published in `call`.
  const std::byte* own_buffer(uint64_t call) const {
    return reinterpret_cast<const std::byte*>(static_cast<uintptr_t>(
        lines_[rank_].buffer[call & 1].address.load(std::memory_order_relaxed)));
  }
  // Copies `to.size()` bytes at `offset` of the buffer `member` published
  // in `call` (after await_member) into `to`. Errc::mismatch if that
  // buffer is not `published` bytes long (the signature compares sizes
  // modulo 2^24 only), Errc::cancelled if the member withdrew it (its call
  // failed: withdraw_buffers) before or while this rank copied,
  // Errc::peer_failed if the member's process is gone, Errc::transport for
  // any other failed or short read; each message names the member, the
  // call and the cause.
  void pull(int member, uint64_t call, const CallSignature& signature, size_t published,
            size_t offset, std::span<std::byte> to);
  // This member's scratch buffer of at least `bytes` (kept between calls).
  std::byte* scratch(size_t bytes);

  // Single copy: marks every buffer this member published as withdrawn, so
  // a reader whose copy may overlap the caller's reuse of it throws instead
  // of delivering (pull checks before and after it reads). Called when a
  // call that published a buffer leaves by an exception (Lending), before
  // the caller gets the buffer back.
  void withdraw_buffers();

  // Lends this member's published buffers for one single-copy call: an
  // exception that leaves the scope withdraws them (withdraw_buffers). A
  // call that returns normally has waited for every reader already.
  class Lending {
   public:
    explicit Lending(Group& group) : group_(group) {}
    ~Lending() {
      if (std::uncaught_exceptions() > exceptions_) group_.withdraw_buffers();
    }
    Lending(const Lending&) = delete;
    Lending& operator=(const Lending&) = delete;

   private:
    Group& group_;
    int exceptions_ = std::uncaught_exceptions();
  };

  // A control line's signature word for `call`: the call number's low
  // bits above the packed signature.
  static constexpr uint64_t kCallBits = 24;
  static constexpr uint64_t kSignatureBits = 40;
  static constexpr uint64_t kCallMask = (uint64_t{1} << kCallBits) - 1;
  static uint64_t signature_word(uint64_t call, const CallSignature& signature) {
    return (call & kCallMask) << kSignatureBits | signature.pack();
  }

 private:
  InlineLine& inline_line(int member, uint64_t call) const {
    return inlines_[static_cast<size_t>(member) * 2 + (call & 1)];
  }
  std::byte* slot_of(int member, uint64_t call) const {
    const size_t index = static_cast<size_t>(member) * 2 + (call & 1);
    return slots_ + index * slot_bytes_;
  }
  // The common case inline: `member`'s word for `call` is this member's;
  // else check_signature_word (a member two calls ahead, or a mismatch).
  void check_signature(int member, uint64_t call, const CallSignature& signature) const {
    const uint64_t word = lines_[member].signature[call & 1].load(std::memory_order_relaxed);
    if (word != signature_word(call, signature)) [[unlikely]]
      check_signature_word(member, call, signature, word);
  }
  void check_signature_word(int member, uint64_t call, const CallSignature& signature,
                            uint64_t word) const;
  void wake_sleepers();
  bool entered(int member, uint64_t call) const {
    return lines_[member].entered.load(std::memory_order_acquire) >= call;
  }
  template <class Ready, class Check>
  void wait_for(int member, uint64_t call, const CallSignature& signature, Ready ready,
                Check check);
  void wait_entered(int member, uint64_t call, const CallSignature& signature);
  void wait_inline(int member, uint64_t call, const CallSignature& signature);
  void check_departures(int member, uint64_t call, const CallSignature& signature);
  void sleep_on(int member, uint64_t call, int64_t max_us);

  Transport& transport_;
  FirstDepartedFn first_departed_;
  void* base_;
  size_t length_;
  size_t slot_bytes_;
  int rank_;
  int size_;
  ControlLine* lines_;
  InlineLine* inlines_;  // two per member, by call parity
  std::byte* slots_;
  uint64_t calls_ = 0;
  uint64_t last_write_[2] = {0,
                             0};  // by parity: the last call that wrote the own slot or inline line
  std::vector<pid_t> pids_;       // by member; empty: no single-copy path
  std::vector<std::byte> scratch_;
};

// Runs a call by its route (Group::route): `slots()` or, lending this
// member's buffers for the call, `single_copy()`; false when the call does
// not take the segment.
template <class Slots, class SingleCopy>
bool run_route(Group& group, Group::Route route, Slots&& slots, SingleCopy&& single_copy) {
  switch (route) {
    case Group::Route::none:
      return false;
    case Group::Route::slots:
      slots();
      return true;
    case Group::Route::single_copy: {
      const Group::Lending lending(group);
      single_copy();
      return true;
    }
  }
  return false;
}

// What attach needs of the communicator it serves.
struct AttachContext {
  int rank = 0;
  int size = 1;
  uint32_t context = 0;  // the communicator's context id (part of the segment's name)
  Transport* transport = nullptr;
  Group::FirstDepartedFn first_departed;
  // An allgather of one fixed-size record per member over the communicator:
  // `mine` from every member lands in `all` in rank order; `what` names it
  // in errors. Blocking.
  std::function<void(std::span<const std::byte> mine, std::span<std::byte> all,
                     const std::string& what)>
      exchange;
};

// Maps a segment for the communicator if shm_collectives is on, every member
// runs on this host and there is more than one member; collective (two small
// exchanges). Returns null on every member alike when any member cannot map
// it (the reason is printed once, by rank 0).
std::shared_ptr<Group> attach(const AttachContext& comm, bool same_host);

}  // namespace grove::shm
