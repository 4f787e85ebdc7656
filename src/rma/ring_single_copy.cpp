// RingEndpoint, single copy (docs/rma.md "Large messages"): on a safe lane
// whose writer maps the reader's memory (same host), send() of a message
// longer than ring_single_copy_bytes does not copy it into the slot: it
// *offers* it in the lane header (OfferBody: the buffer's address and
// length in the writer's process) and waits; the reader copies it once,
// straight from the writer's buffer into its receive buffer
// (process_vm_readv), and its credit ends the writer's wait. The slot
// format, credits and counters are those of every other message; the slot
// of an offered message is simply not written. A message is offered only
// when the reader has consumed every earlier one (ring_endpoint.cpp): a
// reader that lags is busy or descheduled, and then the slots let the
// writer run ahead instead of waiting.
//
// The offer word (ring_layout.hpp, kOfferTaken) settles who owns the
// message, by compare-and-swap on both sides, so the writer can always fall
// back to writing the slot itself, which a mapped lane's slots are sized
// for:
// - the reader takes it (seq -> seq | taken), then reads the body: a
//   damaged body (its CRC, a length above the capacity) is counted corrupt
//   and declined; a receive buffer too short gives it back (-> seq) and is
//   Errc::truncated, nothing consumed; a writer whose memory it cannot read
//   (process_vm_readv refused, or the token word of that pid is not the
//   writer's: another pid namespace) is refused, once per lane;
// - the writer takes it back (seq -> 0) when the reader has not taken it
//   within ring_single_copy_wait_us: a reader busy elsewhere, or itself
//   waiting in a send to this rank, never makes a send wait for a receive
//   (the ring's sends stay buffered, as with slots);
// - declined, refused or taken back, the writer writes the message into
//   its slot as any other (chunked), and the reader reads it from there.
// Why the payload CRC is off by default (ring_single_copy_crc): the payload
// never lies in shared memory, where the slot CRC guards against stray
// stores and torn writes; the kernel copies it once, from a buffer the
// writer does not return (and so does not change) until the reader's credit,
// and the offer that says where it is carries its own CRC. With the
// parameter on, the writer checksums its buffer before offering and the
// reader what it received, and a mismatch is corrupt and declined (then the
// slot's checks apply).

#include <cstddef>
#include <cstring>

#include <fmt/format.h>

#include "core/params.hpp"
#include "rma/crc32c.hpp"
#include "rma/ring_state.hpp"
#include "sched/handshake_fence.hpp"

namespace grove::rma {
namespace {

// The offer's own checksum: the seq, then the body up to its crc field.
uint32_t offer_crc(uint64_t seq, const OfferBody& body) {
  const uint32_t crc = crc32c_extend(0, &seq, sizeof(seq));
  return crc32c_extend(crc, &body, offsetof(OfferBody, crc));
}

}  // namespace

bool RingEndpoint::State::try_offer(OutLane& lane, std::span<const std::byte> message) {
  if (message.size() > lane.spec.capacity) {
    throw Error(Errc::invalid_argument,
                fmt::format("rank {}: {}: a message of {} B exceeds the lane's slot capacity of "
                            "{} B; nothing was sent",
                            rank(), lane_name(lane.spec), message.size(), lane.spec.capacity));
  }
  if (!has_credit(lane)) return false;
  const uint64_t seq = lane.sent + 1;
  auto* header = reinterpret_cast<LaneHeader*>(lane.mapped);
  OfferBody body{};
  body.address = reinterpret_cast<uintptr_t>(message.data());
  body.len = message.size();
  body.token_address = self_target.address;
  body.token = self_target.token;
  body.pid = self_target.pid;
  if (single_copy_crc) {
    body.flags = kOfferPayloadCrc;
    body.payload_crc = crc32c_extend(0, message.data(), message.size());
  }
  body.crc = offer_crc(seq, body);
  std::memcpy(&header->offer_body, &body, sizeof(body));
  header->offer.store(seq, std::memory_order_release);
  // As after a slot's seq (write_mapped): the reader's sleeping word next.
  sched::publish_fence();
  wake_sleeper(header->reader_sleeping, lane.spec.dst);
  lane.sent = seq;
  lane.offered = seq;
  return true;
}

bool RingEndpoint::State::offer_settled(OutLane& lane, std::span<const std::byte> message,
                                        std::chrono::steady_clock::time_point deadline) {
  const uint64_t seq = lane.offered;
  refresh_credits(lane);
  if (lane.acked >= seq) {
    ++lane.single_copy;
    lane.offered = 0;
    return true;
  }
  auto& offer = reinterpret_cast<LaneHeader*>(lane.mapped)->offer;
  const uint64_t state = offer.load(std::memory_order_acquire);
  bool slot = state == (seq | kOfferDeclined) || state == (seq | kOfferRefused);
  if (state == (seq | kOfferRefused)) lane.single_copy_off = true;
  if (!slot && state == seq && std::chrono::steady_clock::now() >= deadline) {
    uint64_t open = seq;
    slot = offer.compare_exchange_strong(open, 0, std::memory_order_acq_rel);
  }
  if (!slot) return false;
  // Nobody reads the buffer now: the message goes into its slot, as any
  // other (the reader looks at the slot whenever no offer is open).
  lane.offered = 0;
  write_mapped(lane, seq, message);
  return true;
}

void RingEndpoint::State::abandon_offer(OutLane& lane, const Error& error) {
  const uint64_t seq = lane.offered;
  if (seq == 0) return;
  lane.offered = 0;
  uint64_t open = seq;
  auto& offer = reinterpret_cast<LaneHeader*>(lane.mapped)->offer;
  if (offer.compare_exchange_strong(open, 0, std::memory_order_acq_rel)) {
    // Never sent: the next send reuses its number.
    lane.sent = seq - 1;
    return;
  }
  broken = Error(error.code(),
                 fmt::format("{} (message {} was offered for a single copy and the reader took "
                             "it: it may still read the send buffer, so the ring is broken)",
                             error.what(), seq));
}

void RingEndpoint::State::decline_offer(InLane& lane, uint64_t seq, uint64_t why) {
  lane.header->offer.store(seq | why, std::memory_order_release);
  // The writer waits for this or a credit: wake it as a credit would.
  sched::publish_fence();
  if (lane.credit_mapped != nullptr) {
    wake_sleeper(lane.credit_mapped->writer_sleeping, lane.spec.src);
  } else {
    wake(lane.spec.src);
  }
}

std::optional<size_t> RingEndpoint::State::take_offer(InLane& lane, std::span<std::byte> out) {
  const uint64_t e = lane.expected;
  auto& offer = lane.header->offer;
  uint64_t open = e;
  if (!offer.compare_exchange_strong(open, e | kOfferTaken, std::memory_order_acq_rel)) {
    return std::nullopt;  // taken back meanwhile: the slot follows
  }
  if (lane.single_copy_refused) {
    decline_offer(lane, e, kOfferRefused);
    return std::nullopt;
  }
  // Read only now: until the take the writer may have moved on to another
  // offer (taken back, then the slot, then the next message).
  OfferBody body;
  std::memcpy(&body, &lane.header->offer_body, sizeof(body));
  if (body.crc != offer_crc(e, body) || body.len > lane.spec.capacity ||
      (body.flags & ~kOfferPayloadCrc) != 0) {
    count_corrupt(lane, e);
    decline_offer(lane, e, kOfferDeclined);
    return std::nullopt;
  }
  if (body.len > out.size()) {
    offer.store(e, std::memory_order_release);  // given back, nothing consumed
    throw Error(Errc::truncated,
                fmt::format("rank {}: {}: message {} has {} B, the receive buffer {} B; "
                            "nothing was consumed",
                            rank(), lane_name(lane.spec), e, body.len, out.size()));
  }
  const size_t length = body.len;
  // The writer's pid means this writer only if its token word reads right
  // (a pid of another namespace names another process).
  if (lane.verified_pid != body.pid) {
    uint64_t token = 0;
    const shm::PeerRead probe =
        shm::read_peer(body.pid, body.token_address, std::as_writable_bytes(std::span(&token, 1)));
    if (probe.error != 0 || token != body.token) {
      lane.single_copy_refused = true;
      decline_offer(lane, e, kOfferRefused);
      return std::nullopt;
    }
    lane.verified_pid = body.pid;
  }
  const shm::PeerRead read = shm::read_peer(body.pid, body.address, out.first(length));
  if (read.error != 0) {
    lane.single_copy_refused = true;
    decline_offer(lane, e, kOfferRefused);
    return std::nullopt;
  }
  if ((body.flags & kOfferPayloadCrc) != 0 &&
      crc32c_extend(0, out.data(), length) != body.payload_crc) {
    count_corrupt(lane, e);
    decline_offer(lane, e, kOfferDeclined);
    return std::nullopt;
  }
  return length;
}

}  // namespace grove::rma
