// RingEndpoint, the reading side of a descriptor slot (direct lanes,
// rma/ring_layout.hpp; docs/rma.md "Large messages"): the payload is
// fetched from the writer's staging block with one get straight into the
// receive buffer. A direct lane has no mapping (a mapped one keeps its
// messages in the slots), so the fetch always goes through the transport.

#include <cstring>

#include <fmt/format.h>

#include "rma/abandon.hpp"
#include "rma/crc32c.hpp"
#include "rma/ring_state.hpp"
#include "sched/wait.hpp"

namespace grove::rma {

// What is checked, in order: the slot's guard, the length against the
// lane's capacity and the offset against the one block the message may be
// in (anything else, outside the writer's region included, is corrupt and
// nothing is read); then, after the fetch, the block's seq (the writer
// rewrote the block meanwhile: raw mode, overwritten; safe mode, credits
// forbid it, corrupt) and the CRC over the fetched bytes. A message that
// fails is never delivered; `out` may hold part of it.
std::optional<size_t> RingEndpoint::State::fetch(InLane& lane, const std::byte* slot,
                                                 std::span<std::byte> out, bool* overwritten) {
  *overwritten = false;
  const auto* header = reinterpret_cast<const SlotHeader*>(slot);
  const uint64_t e = lane.expected;
  const size_t length = header->len;
  const uint32_t stored_crc = header->crc;
  uint64_t offset = 0, guard = 0;
  std::memcpy(&offset, slot + kSlotHeader, 8);
  std::memcpy(&guard, slot + kSlotHeader + kDescriptorBytes, 8);
  // Raw mode: the writer may be rewriting the slot for a later message
  // while it is read (it clears seq first), so a check that fails counts
  // only if seq still says e afterwards; otherwise the message was
  // overwritten.
  const bool raw = layout.mode() == RingMode::raw;
  auto rewritten = [&] {
    if (!raw) return false;
    std::atomic_thread_fence(std::memory_order_acquire);
    *overwritten = header->seq.load(std::memory_order_relaxed) != e;
    return *overwritten;
  };
  const uint64_t block_offset =
      lane.blocks_offset + ((e - 1) % lane.spec.depth) * lane.block_stride;
  if (lane.block_stride == 0 || guard != ~e || length > lane.spec.capacity ||
      offset != block_offset + 8) {
    if (!rewritten()) count_corrupt(lane, e);
    return std::nullopt;
  }
  if (length > out.size() && !rewritten()) {
    throw Error(Errc::truncated,
                fmt::format("rank {}: {}: message {} has {} B, the receive buffer {} B; "
                            "nothing was consumed",
                            rank(), lane_name(lane.spec), e, length, out.size()));
  }
  if (*overwritten) return std::nullopt;
  // The payload, then (fenced after it) the block's seq: the writer clears
  // that seq before it rewrites the payload, so a fetch that saw any new
  // byte reads a seq other than e.
  Transport& transport = group->transport();
  lane.fetch_flight.busy += 2;
  transport.rma_get(*lane.credit_target, offset, out.data(), length, &Flight::done,
                    &lane.fetch_flight);
  transport.rma_fence();
  transport.rma_get(*lane.credit_target, block_offset, &lane.fetched_seq, 8, &Flight::done,
                    &lane.fetch_flight);
  // Formatted only when an error names it (this is the large-message path).
  auto what = [&] {
    return fmt::format("rank {}: {}: fetch of message {} ({} B)", rank(), lane_name(lane.spec), e,
                       length);
  };
  try {
    sched::wait_until_described(
        transport, group->notice_fd(), [&] { return lane.fetch_flight.busy == 0; }, what);
  } catch (const Error& error) {
    // The gets cannot be stopped: the ring is broken, and the receive
    // buffer is not handed back while they may still write into it
    // (rma/abandon.hpp: wait, then give up on the writer's connection).
    broken = error;
    if (!abandon_rma(transport, lane.spec.src, [&] { return lane.fetch_flight.busy == 0; })) {
      broken = Error(error.code(), fmt::format("{} (the fetch could not be stopped: the "
                                               "transport may still write the receive buffer)",
                                               error.what()));
    }
    throw *broken;
  }
  if (lane.fetch_flight.failed) {
    broken = Error(lane.fetch_flight.code,
                   fmt::format("{}: the get failed{}", what(),
                               group->departed(lane.spec.src)
                                   ? fmt::format(": rank {} departed", lane.spec.src)
                                   : ""));
    throw *broken;
  }
  const uint32_t crc = crc32c_extend(0, out.data(), length);
  const uint64_t block_seq = lane.fetched_seq;
  if (block_seq != e) {
    if (raw) {
      *overwritten = true;
    } else {
      count_corrupt(lane, e);
    }
    return std::nullopt;
  }
  if (crc != stored_crc) {
    if (!rewritten()) count_corrupt(lane, e);
    return std::nullopt;
  }
  return length;
}

}  // namespace grove::rma
