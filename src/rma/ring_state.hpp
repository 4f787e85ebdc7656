#pragma once
// RingEndpoint's state, shared by its writer (ring_writer.cpp), reader
// (ring_reader.cpp) and set-up (ring_endpoint.cpp). Internal to src/rma.

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "coll/shm/cma.hpp"
#include "rma/ring_endpoint.hpp"
#include "rma/slot_copy.hpp"

namespace grove::rma {

// Transfers through the transport that have not completed: a put's
// source must stay put until then. Addresses stay fixed (held in vectors
// sized once), so completions point at them.
struct Flight {
  uint32_t busy = 0;
  bool failed = false;
  Errc code = Errc::internal;
  static void done(void* context, const Status& status) {
    auto* self = static_cast<Flight*>(context);
    --self->busy;
    if (!status.ok && !self->failed) {
      self->failed = true;
      self->code = status.code;
    }
  }
};

// What a descriptor slot says (ring_layout.hpp): the payload's offset in
// the writer's region and its CRC-32C; its length is the message's.
struct Descriptor {
  uint64_t offset = 0;
  uint32_t crc = 0;
};

// A lane's sleeps (LaneCounters::sleeps, sleeps_timed_out).
struct SleepCounts {
  uint64_t slept = 0;      // waits that set their sleeping word and slept
  uint64_t timed_out = 0;  // sleeps that ran out their time limit
};

struct OutLane {
  int lane = -1;
  LaneSpec spec;
  size_t stride = 0;
  uint64_t inline_capacity = 0;  // longer messages travel by descriptor
  // Direct lanes: the staging area in this rank's memory (block i: [seq
  // u64][payload], for the message in slot i), its offset in this rank's
  // region and the block stride.
  std::byte* blocks = nullptr;
  size_t blocks_offset = 0;
  size_t block_stride = 0;
  RmaTarget* target = nullptr;  // the reader's region
  size_t inbox = 0;             // the lane's offset in it
  // The lane's inbox through a mapping, or null (then, and always on a
  // direct lane, slots are put through the transport).
  std::byte* mapped = nullptr;
  CreditLine* credit = nullptr;  // in this rank's memory
  uint64_t sent = 0;
  uint64_t chunked = 0, by_descriptor = 0;  // how messages went (LaneCounters)
  uint64_t single_copy = 0;                 // taken by the reader from an offer
  uint64_t offered = 0;                     // the seq of the open offer, or 0
  bool single_copy_off = false;             // the reader refused an offer: none more
  uint64_t acked = 0;                       // the credit word as last read
  uint64_t blocked_seq = 0;                 // the message whose send last found the lane full
  uint64_t waits = 0;
  double wait_seconds = 0;
  SleepCounts sleeps;  // waits that slept, and how their sleeps ended
  // Without a mapping: one slot image per slot, and its puts in flight.
  std::vector<std::byte> staging;
  std::vector<Flight> flights;
};

struct InLane {
  int lane = -1;
  LaneSpec spec;
  size_t stride = 0;
  uint64_t inline_capacity = 0;
  // Direct lanes: the writer's staging area (offset in its region, block
  // stride); a fetch through the transport (payload, then the block's seq
  // word) and the seq word it read.
  size_t blocks_offset = 0;
  size_t block_stride = 0;
  Flight fetch_flight;
  uint64_t fetched_seq = 0;
  LaneHeader* header = nullptr;  // in this rank's memory
  std::byte* slots = nullptr;
  RmaTarget* credit_target = nullptr;  // the writer's region
  size_t credit_offset = 0;
  CreditLine* credit_mapped = nullptr;  // through a mapping, or null
  uint64_t expected = 1;                // the next message to deliver
  uint64_t delivered = 0, lost = 0, corrupt = 0, max_lag = 0;
  SleepCounts sleeps;         // waits that slept, and how their sleeps ended
  uint64_t last_corrupt = 0;  // the last message counted corrupt
  // Single-copy offers: the writer pid whose token word was read and right
  // (0: none yet), and whether this reader cannot read the writer (it then
  // refuses every offer without trying).
  int32_t verified_pid = 0;
  bool single_copy_refused = false;
  // A message read while it is being written (chunks): which, into where,
  // how far, and the CRC so far.
  uint64_t partial_seq = 0;
  std::byte* partial_out = nullptr;
  size_t partial_copied = 0;
  uint32_t partial_crc = 0;
  // Safe mode: credits sent (through the transport: one put in flight at
  // most; its completion, ack_done, posts the next).
  RingEndpoint::State* owner = nullptr;
  uint64_t acked_sent = 0;
  uint64_t ack_value = 0;
  Flight ack_flight;
};

struct RingEndpoint::State {
  std::shared_ptr<Group> group;
  RingLayout layout;
  RegionSet regions;
  std::vector<OutLane> out;                // lanes this rank writes, in lane order
  std::vector<InLane> in;                  // lanes this rank reads, in lane order
  std::vector<int> out_by_dst, in_by_src;  // member -> index in out/in, or -1
  size_t next_any = 0;                     // round-robin start of try_recv_any
  // What a recv_any waits on: every incoming lane's sleeping word, sleep
  // counter and writer, and whether one of them goes through the transport.
  std::vector<std::atomic<uint32_t>*> any_flags;
  std::vector<SleepCounts*> any_sleeps;
  std::vector<int> any_sources;
  bool any_through_transport = false;
  size_t chunk_bytes = 0;  // ring_chunk_bytes at creation
  // ring_slot_copy at creation: how a slot's payload is copied and
  // checksummed (ring_writer.cpp).
  SlotCopy slot_copy = SlotCopy::two_pass;
  // ring_crc_bytes at creation (a multiple of 64; 0: the whole payload):
  // how much of a slot payload written through a mapping its CRC covers.
  size_t crc_bytes = 0;
  // Single copy (ring_single_copy.cpp), at creation: messages longer than
  // this (0: none) sent with send() on a safe mapped lane are offered;
  // whether the payload is checksummed; how long an offer stays open.
  size_t single_copy_bytes = 0;
  bool single_copy_crc = false;
  std::chrono::microseconds single_copy_wait{0};
  shm::ProbeTarget self_target;  // this process's pid and token word
  // Chunks of messages being written that this rank copied out so far: a
  // wait that sees it move keeps spinning (ring_endpoint.cpp).
  uint64_t chunks_copied = 0;
  bool closed = false;
  std::optional<Error> broken;  // a protocol error poisons the endpoint

  State(std::shared_ptr<Group> g, RingLayout l) : group(std::move(g)), layout(std::move(l)) {}
  int rank() const { return group->rank(); }
  std::string lane_name(const LaneSpec& spec) const;  // "ring lane 0 -> 1 (safe, depth 8)"
  void check_usable(const char* call) const;
  OutLane& out_lane(int dst, const char* call);
  InLane& in_lane(int src, const char* call);
  bool in_flight() const;

  // ring_writer.cpp
  bool try_send(OutLane& lane, std::span<const std::byte> message);
  void refresh_credits(OutLane& lane);
  // The slot of message `seq`: through the mapping `message` inline;
  // through the transport `message` inline, or (descriptor given) the
  // descriptor of the staged `message`.
  void write_mapped(OutLane& lane, uint64_t seq, std::span<const std::byte> message);
  void write_put(OutLane& lane, uint64_t seq, std::span<const std::byte> message,
                 const Descriptor* descriptor);
  // A message above the lane's inline capacity: its payload into the
  // staging block of its slot.
  Descriptor stage(OutLane& lane, uint64_t seq, std::span<const std::byte> message);

  // ring_single_copy.cpp. Whether send() offers `bytes` on the lane.
  bool single_copy_eligible(const OutLane& lane, size_t bytes) const {
    return single_copy_bytes > 0 && bytes > single_copy_bytes && lane.mapped != nullptr &&
           !lane.single_copy_off && layout.mode() == RingMode::safe;
  }
  // The credit gate of message lane.sent + 1 (safe mode; counts `waits`):
  // true when it may be written.
  bool has_credit(OutLane& lane);
  // Offers `message` as lane.sent + 1 if the credits let it (false: the lane
  // is full, nothing done).
  bool try_offer(OutLane& lane, std::span<const std::byte> message);
  // Whether the open offer is settled: the reader took it and credited it,
  // or declined it, or (past `deadline`) the writer took it back; the last
  // two write `message` into its slot first.
  bool offer_settled(OutLane& lane, std::span<const std::byte> message,
                     std::chrono::steady_clock::time_point deadline);
  // On a failed wait: takes the open offer back if the reader has not taken
  // it; else the ring is broken (the reader may still read the buffer).
  void abandon_offer(OutLane& lane, const Error& error);
  // The reader: message lane.expected offered on the lane, copied into
  // `out`: its length, or nothing (none offered, taken back, or declined).
  std::optional<size_t> take_offer(InLane& lane, std::span<std::byte> out);
  void decline_offer(InLane& lane, uint64_t seq, uint64_t why);
  // ring_endpoint.cpp: send() of an eligible message, waiting as it must.
  void send_single_copy(OutLane& lane, std::span<const std::byte> message);

  // ring_reader.cpp. `partial`: a message being written may be copied
  // before it is complete (recv from one lane, not recv_any).
  std::optional<size_t> poll(InLane& lane, std::span<std::byte> out, bool partial);
  void deliver(InLane& lane, uint64_t expected_before);
  // A descriptor slot for message e (ring_fetch.cpp): validates it, fetches
  // the payload into `out` and checks it. The length, or nothing (counted
  // corrupt, or, raw mode, overwritten while fetched: `overwritten` set).
  std::optional<size_t> fetch(InLane& lane, const std::byte* slot, std::span<std::byte> out,
                              bool* overwritten);
  void send_credit(InLane& lane);
  static void ack_done(void* context, const Status& status);
  void count_corrupt(InLane& lane, uint64_t seq);
  [[noreturn]] void lapped(InLane& lane, uint64_t found, size_t slot);

  void wake(int peer);
  // After a publication: wakes the peer if `word` (its sleeping word,
  // through the mapping) says it sleeps: on the word's futex, or on its
  // transport fd (then by a wake-up message to `peer`).
  // The load is inline: it runs once per message.
  void wake_sleeper(std::atomic<uint32_t>& word, int peer) {
    const uint32_t state = word.load(std::memory_order_relaxed);
    if (state != kAwake) wake_asleep(word, state, peer);
  }
  void wake_asleep(std::atomic<uint32_t>& word, uint32_t state, int peer);
};

}  // namespace grove::rma
