// RingEndpoint, the writing side (the protocol: rma/ring_endpoint.hpp).

#include <cstring>

#include <fmt/format.h>

#include "rma/crc32c.hpp"
#include "rma/ring_state.hpp"
#include "sched/handshake_fence.hpp"

namespace grove::rma {

void RingEndpoint::State::refresh_credits(OutLane& lane) {
  const uint64_t acked = lane.credit->acked.load(std::memory_order_acquire);
  if (acked == lane.acked) return;
  if (acked < lane.acked || acked > lane.sent) {
    broken = Error(Errc::protocol,
                   fmt::format("rank {}: {}: the reader's credit counter reads {} after {}, with "
                               "{} messages sent: it {} (corrupted memory or a second writer)",
                               rank(), lane_name(lane.spec), acked, lane.acked, lane.sent,
                               acked < lane.acked ? "went backwards" : "runs past what was sent"));
    throw *broken;
  }
  lane.acked = acked;
}

bool RingEndpoint::State::has_credit(OutLane& lane) {
  const uint64_t seq = lane.sent + 1;
  if (layout.mode() == RingMode::safe && seq - lane.acked > lane.spec.depth) {
    refresh_credits(lane);
    if (seq - lane.acked > lane.spec.depth) {
      if (lane.blocked_seq != seq) {
        lane.blocked_seq = seq;
        ++lane.waits;
      }
      return false;
    }
  }
  return true;
}

bool RingEndpoint::State::try_send(OutLane& lane, std::span<const std::byte> message) {
  if (message.size() > lane.spec.capacity) {
    throw Error(Errc::invalid_argument,
                fmt::format("rank {}: {}: a message of {} B exceeds the lane's slot capacity of "
                            "{} B; nothing was sent",
                            rank(), lane_name(lane.spec), message.size(), lane.spec.capacity));
  }
  const uint64_t seq = lane.sent + 1;
  if (!has_credit(lane)) return false;
  if (lane.mapped == nullptr) {
    // The slot's previous puts read its staging image: wait for them.
    Flight& flight = lane.flights[(seq - 1) % lane.spec.depth];
    if (flight.busy > 0) {
      group->transport().progress();
      if (flight.busy > 0) return false;
    }
    if (flight.failed) {
      throw Error(flight.code,
                  fmt::format("rank {}: {}: an earlier put failed{}", rank(), lane_name(lane.spec),
                              group->departed(lane.spec.dst)
                                  ? fmt::format(": rank {} departed", lane.spec.dst)
                                  : ""));
    }
  }
  if (lane.mapped != nullptr) {
    write_mapped(lane, seq, message);
  } else if (message.size() > lane.inline_capacity) {
    const Descriptor descriptor = stage(lane, seq, message);
    write_put(lane, seq, message, &descriptor);
    ++lane.by_descriptor;
  } else {
    write_put(lane, seq, message, nullptr);
  }
  lane.sent = seq;
  return true;
}

// The staging block of slot i holds [seq u64][payload] in this rank's own
// memory. Its seq is cleared before the payload is rewritten and set after
// (release), so a reader that fetched the payload and then reads seq == s
// fetched message s whole: in safe mode the credits already say the block
// is free (message s - depth was consumed, fetch included); in raw mode the
// writer may overwrite a block being fetched, which that reader notices.
// (A direct lane is written through the transport, so the slot's
// descriptor lands after the block is staged; a reader holding the old
// descriptor reads a block seq that is not its message's.)
Descriptor RingEndpoint::State::stage(OutLane& lane, uint64_t seq,
                                      std::span<const std::byte> message) {
  const size_t block = (seq - 1) % lane.spec.depth;
  std::byte* base = lane.blocks + block * lane.block_stride;
  auto* block_seq = reinterpret_cast<std::atomic<uint64_t>*>(base);
  block_seq->store(0, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  const uint32_t crc = crc32c_copy(0, base + 8, message.data(), message.size());
  block_seq->store(seq, std::memory_order_release);
  return Descriptor{lane.blocks_offset + block * lane.block_stride + 8, crc};
}

// Through the mapping: payload (with its CRC) first, then the CRC, the
// length, the kind and the guard, then seq with release ordering, so a
// reader that acquires seq == s sees the whole message. Raw mode may
// overwrite a slot the reader is copying: seq is cleared first (a seqlock;
// the reader checks seq again after its copy). Safe mode's slot is free
// (credits), and a long inline message is published chunk by chunk in the
// lane's progress word.
void RingEndpoint::State::write_mapped(OutLane& lane, uint64_t seq,
                                       std::span<const std::byte> message) {
  auto* lane_header = reinterpret_cast<LaneHeader*>(lane.mapped);
  std::byte* slot = lane.mapped + sizeof(LaneHeader) + ((seq - 1) % lane.spec.depth) * lane.stride;
  auto* header = reinterpret_cast<SlotHeader*>(slot);
  std::byte* payload = slot + kSlotHeader;
  const size_t length = message.size();
  if (layout.mode() == RingMode::raw) {
    header->seq.store(0, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
  }
  header->len = length;
  uint32_t crc = 0;
  // ring_crc_bytes: a longer payload's CRC covers its first crc_bytes only
  // (the kind says how much, so the reader needs no setting of its own).
  const size_t covered = crc_bytes > 0 && length > crc_bytes ? crc_bytes : length;
  header->kind = covered < length ? prefix_kind(covered) : kSlotInline;
  auto copy_range = [&](uint32_t c, size_t at, size_t n) {
    return copy_into_slot(slot_copy, c, payload, message.data(), at, n, covered);
  };
  if (layout.mode() == RingMode::safe && length > chunk_bytes) {
    const uint64_t tag = (seq & 0xffffffffu) << 32;
    size_t done = 0;
    while (done < length) {
      const size_t n = std::min(chunk_bytes, length - done);
      crc = copy_range(crc, done, n);
      done += n;
      if (done < length) lane_header->progress.store(tag | done, std::memory_order_release);
    }
    ++lane.chunked;
  } else if (length > 0) {
    crc = copy_range(0, 0, length);
  }
  header->crc = crc;
  const uint64_t guard = ~seq;
  std::memcpy(payload + round8(length), &guard, sizeof(guard));
  header->seq.store(seq, std::memory_order_release);
  // Store seq, then read the reader's sleeping word (the reader stores the
  // word, then reads seq): one of the two sees the other's store
  // (sched/handshake_fence.hpp).
  sched::publish_fence();
  wake_sleeper(lane_header->reader_sleeping, lane.spec.dst);
}

// Through the transport: the image is built in the slot's staging buffer
// and put in two parts, the body, then (after a fence) seq, so a reader
// never sees seq before the body. Raw mode first clears the slot's seq
// (another fenced put). The caller checked that the slot's earlier puts
// completed.
void RingEndpoint::State::write_put(OutLane& lane, uint64_t seq, std::span<const std::byte> message,
                                    const Descriptor* descriptor) {
  const size_t slot = (seq - 1) % lane.spec.depth;
  Flight& flight = lane.flights[slot];
  std::byte* image = lane.staging.data() + slot * lane.stride;
  const size_t length = message.size();
  const uint64_t len64 = length;
  std::memcpy(image + 8, &len64, 8);
  uint32_t crc = 0;
  size_t body = length;
  uint32_t kind = kSlotInline;
  if (descriptor != nullptr) {
    std::memcpy(image + kSlotHeader, &descriptor->offset, 8);
    crc = descriptor->crc;
    body = kDescriptorBytes;
    kind = kSlotDescriptor;
  } else if (length > 0) {
    crc = crc32c_copy(0, image + kSlotHeader, message.data(), length);
  }
  std::memcpy(image + 16, &crc, 4);
  std::memcpy(image + 20, &kind, 4);
  const uint64_t guard = ~seq;
  std::memcpy(image + kSlotHeader + round8(body), &guard, 8);
  std::memcpy(image, &seq, 8);
  static const uint64_t kZero = 0;
  Transport& transport = group->transport();
  const size_t offset = lane.inbox + sizeof(LaneHeader) + slot * lane.stride;
  if (layout.mode() == RingMode::raw) {
    ++flight.busy;
    transport.rma_put(*lane.target, offset, &kZero, 8, &Flight::done, &flight);
    transport.rma_fence();
  }
  flight.busy += 2;
  transport.rma_put(*lane.target, offset + 8, image + 8, image_bytes(body) - 8, &Flight::done,
                    &flight);
  transport.rma_fence();
  transport.rma_put(*lane.target, offset, image, 8, &Flight::done, &flight);
  wake(lane.spec.dst);  // the reader's sleeping word is out of reach: always
}

}  // namespace grove::rma
