#pragma once
// One rank's side of a ring (rma/ring_layout.hpp): it writes the lanes it
// is the source of and reads the lanes it is the destination of. The
// protocol (docs/rma.md, "Ring channels"):
//
// Writing message s on a lane (one writer per lane, so nothing is claimed
// remotely): the slot image goes into slot (s - 1) mod depth of the
// reader's inbox, seq last. Through a mapping (same host) the writer
// checksums its buffer (CRC-32C) and copies it in, and seq is stored with
// release ordering; a message above ring_chunk_bytes (safe mode) is copied
// in chunks, each published in the lane's progress word, so the reader
// copies chunk k while the writer writes chunk k+1, whatever its size.
// Without a mapping the image is put through the transport, seq in a
// separate put after a fence; on such a lane whose capacity exceeds
// ring_direct_bytes (a direct lane) a longer message is staged in the
// writer's own memory and the slot carries a descriptor; the reader fetches
// the payload with one get and checks the staging block's seq and the CRC
// (ring_fetch.cpp; docs/rma.md "Large messages"). Which lanes are mapped
// every rank learns at creation, before anything is placed. On a safe
// mapped lane, send() of a message above ring_single_copy_bytes offers it
// in the lane header instead (where it lies in the writer's memory): the
// reader copies it once, with process_vm_readv, and the send returns on its
// credit; an offer not taken within ring_single_copy_wait_us, declined or
// refused is written into its slot after all (ring_single_copy.cpp).
//
// Reading polls this rank's own memory only: slot (e - 1) mod depth for the
// expected message e. seq == e: copy out, check guard (~seq), length and
// CRC; a failure counts `corrupt` (once per message) and the slot is read
// again later. seq > e: safe mode, a lapped slot (an error); raw mode, the
// messages in between were overwritten: the oldest message still in a slot
// is delivered next and `lost` grows by the gap.
//
// Safe mode: the reader's cumulative count of consumed messages (its credit
// word, in the writer's memory) gates the writer: message s may be written
// once s - acked <= depth. A send that finds the gate shut counts `waits`.
// Raw mode: no credits; the writer overwrites; invariant, once the reader
// has seen the last message: delivered + lost == sent.
//
// Sleeping: a waiting reader (writer) that may block sets its sleeping word
// in its own memory before its last check; the peer, after publishing a slot
// (a credit), reads that word through its mapping and wakes it: on one
// mapped lane the waiter sleeps on the word itself (a futex; the peer clears
// the word and wakes it), otherwise on the transport's fd (the peer sends an
// empty active message whose arrival ends the block). Without a mapping the
// peer sends one after every publication. The fences between each side's
// store and load are asymmetric where the kernel allows: the publisher's is
// a compiler barrier, the sleeper's a membarrier (sched/handshake_fence.hpp),
// which a futex sleeper issues only after a first brief look
// (docs/rma.md "Waiting").

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "rma/exchange.hpp"
#include "rma/group.hpp"
#include "rma/ring_layout.hpp"

namespace grove::rma {

// The active-message id whose arrival wakes a sleeping ring waiter.
inline constexpr uint16_t kRingWakeup = 0x0152;

struct LaneCounters {
  int src = -1;
  int dst = -1;
  // Writer side (zero on the reader's copy).
  uint64_t sent = 0;
  uint64_t chunked = 0;        // written into the slot in chunks (safe mode, mapped lane)
  uint64_t by_descriptor = 0;  // staged in the writer's memory, fetched by the reader
  uint64_t single_copy = 0;    // copied once by the reader from the writer's buffer (send())
  uint64_t waits = 0;          // safe mode: sends that found the lane full
  double wait_seconds = 0;     // time those sends spent waiting
  // Reader side (zero on the writer's copy).
  uint64_t delivered = 0;
  uint64_t lost = 0;     // raw mode: overwritten before they were read
  uint64_t corrupt = 0;  // messages whose slot failed the guard, length or CRC check
  uint64_t max_lag = 0;  // the largest sequence advance of one delivery (1 without loss)
  // Either side: waits on this lane that set their sleeping word to sleep
  // (ring_wait; recv_any counts on every incoming lane).
  uint64_t sleeps = 0;
  // Of those sleeps, the ones that ran out their time limit (the transport's
  // block returned no earlier than the limit) instead of being ended by the
  // peer's wake-up: a missed or late wake-up shows here, whether or not the
  // message had come meanwhile. A waiter whose peer publishes nothing for
  // longer than the limit sleeps it out too.
  uint64_t sleeps_timed_out = 0;
};

class RingEndpoint {
 public:
  // Collective over `group`: validates the lanes (every member must pass
  // the same lanes and mode: a difference is Errc::mismatch naming the
  // member and the lane), allocates this rank's inboxes and credit words
  // and attaches its peers'.
  RingEndpoint(std::shared_ptr<Group> group, std::vector<LaneSpec> lanes, RingMode mode);
  ~RingEndpoint();
  RingEndpoint(const RingEndpoint&) = delete;
  RingEndpoint& operator=(const RingEndpoint&) = delete;

  const RingLayout& layout() const;
  int rank() const;

  // Writes `message` on the lane (rank, dst). False (nothing written) when a
  // safe lane is full or the transport still holds the slot's previous put.
  bool try_send(int dst, std::span<const std::byte> message);
  // Waits (wait_policy, timeout_ms) until try_send succeeds.
  void send(int dst, std::span<const std::byte> message);

  // The next message of lane (src, rank) into `out`: its length, or nothing
  // when none is complete yet. A message longer than `out` is
  // Errc::truncated, and stays (nothing consumed).
  std::optional<size_t> try_recv(int src, std::span<std::byte> out);
  size_t recv(int src, std::span<std::byte> out);
  struct Received {
    int src = -1;
    size_t bytes = 0;
  };
  // Any incoming lane, polled round-robin.
  std::optional<Received> try_recv_any(std::span<std::byte> out);
  Received recv_any(std::span<std::byte> out);

  // This rank's counters of every lane it writes or reads, in lane order.
  std::vector<LaneCounters> counters() const;

  // Collective: completes this rank's transfers in flight, waits for every
  // member, frees the memory. Later calls are errors.
  void close();

  // This rank's region (its inboxes and credit lines, RingLayout's offsets):
  // tests corrupt slots through it.
  std::byte* local_memory();

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace grove::rma
