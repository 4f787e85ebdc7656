// RingEndpoint, the reading side (the protocol: rma/ring_endpoint.hpp).
// Every read is of this rank's own memory.

#include <cstring>

#include <fmt/format.h>

#include "rma/ring_state.hpp"
#include "sched/handshake_fence.hpp"

namespace grove::rma {

void RingEndpoint::State::count_corrupt(InLane& lane, uint64_t seq) {
  if (lane.last_corrupt == seq) return;
  lane.last_corrupt = seq;
  ++lane.corrupt;
}

void RingEndpoint::State::lapped(InLane& lane, uint64_t found, size_t slot) {
  broken = Error(Errc::protocol,
                 fmt::format("rank {}: {}: slot {} holds message {} while message {} is expected: "
                             "the writer lapped the reader (a safe lane's credits were not "
                             "respected)",
                             rank(), lane_name(lane.spec), slot, found, lane.expected));
  throw *broken;
}

void RingEndpoint::State::deliver(InLane& lane, uint64_t expected_before) {
  ++lane.delivered;
  lane.expected += 1;
  lane.max_lag = std::max(lane.max_lag, lane.expected - expected_before);
  lane.partial_seq = 0;
  if (layout.mode() == RingMode::safe) send_credit(lane);
}

// Safe mode: tells the writer how many messages were consumed. Through a
// mapping, a store (then the writer's sleeping word is checked, as the
// writer checks the reader's). Through the transport, a put of the count
// with one put in flight at most (so counts never arrive out of order);
// deliveries while it flies are covered by the next put, which its
// completion posts (ack_done), so every consumed message is credited
// without the reader polling the lane again.
void RingEndpoint::State::send_credit(InLane& lane) {
  if (lane.credit_mapped != nullptr) {
    if (lane.acked_sent == lane.delivered) return;
    lane.acked_sent = lane.delivered;
    lane.credit_mapped->acked.store(lane.delivered, std::memory_order_release);
    sched::publish_fence();
    wake_sleeper(lane.credit_mapped->writer_sleeping, lane.spec.src);
    return;
  }
  if (lane.delivered == lane.acked_sent) return;
  // A completed credit put that nobody progressed yet posts this one.
  if (lane.ack_flight.busy > 0) group->transport().progress();
  if (lane.delivered == lane.acked_sent || lane.ack_flight.busy > 0) return;
  if (lane.ack_flight.failed || closed) return;  // a departed writer is reported elsewhere
  lane.ack_value = lane.delivered;
  lane.acked_sent = lane.delivered;
  ++lane.ack_flight.busy;
  group->transport().rma_put(*lane.credit_target, lane.credit_offset, &lane.ack_value, 8,
                             &State::ack_done, &lane);
  wake(lane.spec.src);
}

void RingEndpoint::State::ack_done(void* context, const Status& status) {
  auto* lane = static_cast<InLane*>(context);
  Flight::done(&lane->ack_flight, status);
  if (status.ok && lane->owner != nullptr) lane->owner->send_credit(*lane);
}

std::optional<size_t> RingEndpoint::State::poll(InLane& lane, std::span<std::byte> out,
                                                bool partial) {
  const uint64_t start = lane.expected;
  const bool raw = layout.mode() == RingMode::raw;
  for (;;) {
    const uint64_t e = lane.expected;
    const size_t slot_index = (e - 1) % lane.spec.depth;
    std::byte* slot = lane.slots + slot_index * lane.stride;
    auto* header = reinterpret_cast<SlotHeader*>(slot);
    const std::byte* payload = slot + kSlotHeader;
    const uint64_t seq = header->seq.load(std::memory_order_acquire);
    if (seq == e) {
      const uint32_t kind = header->kind;
      if (kind == kSlotDescriptor) {
        bool overwritten = false;
        const std::optional<size_t> got = fetch(lane, slot, out, &overwritten);
        if (got) {
          deliver(lane, start);
          return got;
        }
        if (!overwritten) return std::nullopt;
        // Raw mode: the block was rewritten while fetched; the slot says
        // by what once the writer's descriptor lands.
        lane.partial_seq = 0;
        if (header->seq.load(std::memory_order_acquire) != e) continue;
        return std::nullopt;
      }
      // Raw mode: a header read while the writer rewrites the slot may mix
      // two messages; a check that fails counts only if seq still says e.
      auto rewritten = [&] {
        if (!raw) return false;
        std::atomic_thread_fence(std::memory_order_acquire);
        return header->seq.load(std::memory_order_relaxed) != e;
      };
      const size_t length = header->len;
      const std::optional<size_t> covered = crc_covered(kind, length);
      if (!covered || length > lane.inline_capacity) {
        if (rewritten()) continue;
        count_corrupt(lane, e);
        return std::nullopt;
      }
      if (length > out.size()) {
        if (rewritten()) continue;
        throw Error(Errc::truncated,
                    fmt::format("rank {}: {}: message {} has {} B, the receive buffer {} B; "
                                "nothing was consumed",
                                rank(), lane_name(lane.spec), e, length, out.size()));
      }
      uint32_t crc;
      if (lane.partial_seq == e && lane.partial_out == out.data() &&
          lane.partial_copied <= length) {
        crc = copy_from_slot(slot_copy, lane.partial_crc, out.data(), payload, lane.partial_copied,
                             length - lane.partial_copied, *covered);
      } else {
        crc =
            length > 0 ? copy_from_slot(slot_copy, 0, out.data(), payload, 0, length, *covered) : 0;
      }
      uint64_t guard;
      std::memcpy(&guard, payload + round8(length), sizeof(guard));
      const uint32_t stored_crc = header->crc;
      if (raw) {
        // Overwritten while copying (seqlock): gone, look again.
        std::atomic_thread_fence(std::memory_order_acquire);
        if (header->seq.load(std::memory_order_relaxed) != seq) {
          lane.partial_seq = 0;
          continue;
        }
      }
      if (guard != ~e || (slot_copy != SlotCopy::unchecked && crc != stored_crc)) {
        lane.partial_seq = 0;
        count_corrupt(lane, e);
        return std::nullopt;
      }
      deliver(lane, start);
      return length;
    }
    if (seq > e) {
      if (!raw) lapped(lane, seq, slot_index);
      // Raw mode: e and maybe more were overwritten; the oldest message
      // still in a slot is next.
      uint64_t oldest = 0;
      for (uint32_t i = 0; i < lane.spec.depth; ++i) {
        const auto* h = reinterpret_cast<const SlotHeader*>(lane.slots + i * lane.stride);
        const uint64_t s = h->seq.load(std::memory_order_acquire);
        if (s > e && (oldest == 0 || s < oldest)) oldest = s;
      }
      if (oldest == 0) return std::nullopt;  // being rewritten; look again later
      lane.lost += oldest - e;
      lane.expected = oldest;
      lane.partial_seq = 0;
      continue;
    }
    // Not in its slot. Safe mode: offered for a single copy
    // (ring_single_copy.cpp), or being written: copy what the writer has
    // published of it.
    if (!raw && lane.header->offer.load(std::memory_order_relaxed) == e) {
      if (const std::optional<size_t> got = take_offer(lane, out)) {
        deliver(lane, start);
        return got;
      }
    }
    if (partial && !raw) {
      const uint64_t progress = lane.header->progress.load(std::memory_order_acquire);
      if ((progress >> 32) == (e & 0xffffffffu)) {
        const size_t available = progress & 0xffffffffu;
        const size_t length = header->len;
        const std::optional<size_t> covered = crc_covered(header->kind, length);
        if (covered && length <= lane.inline_capacity && available <= length) {
          if (length > out.size()) {
            throw Error(Errc::truncated,
                        fmt::format("rank {}: {}: message {} has {} B, the receive buffer {} B; "
                                    "nothing was consumed",
                                    rank(), lane_name(lane.spec), e, length, out.size()));
          }
          if (lane.partial_seq != e || lane.partial_out != out.data()) {
            lane.partial_seq = e;
            lane.partial_out = out.data();
            lane.partial_copied = 0;
            lane.partial_crc = 0;
          }
          if (available > lane.partial_copied) {
            lane.partial_crc =
                copy_from_slot(slot_copy, lane.partial_crc, out.data(), payload,
                               lane.partial_copied, available - lane.partial_copied, *covered);
            lane.partial_copied = available;
            ++chunks_copied;
          }
        }
      }
    }
    if (!raw && lane.credit_mapped == nullptr) send_credit(lane);
    return std::nullopt;
  }
}

}  // namespace grove::rma
