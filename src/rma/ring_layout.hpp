#pragma once
// Ring channels: where everything lives. A ring is a set of lanes (src,
// dst, depth, capacity), each a single-writer circular buffer of `depth`
// fixed-size slots in the destination's memory; every member computes the
// same layout from the same lane list (docs/rma.md, "Ring channels").
//
// Region of member m, in this order:
//   for each lane with dst == m, in lane order (its inbox):
//     LaneHeader                         one cache line per writer/reader word
//     depth slots of slot_stride bytes
//   for each lane with src == m (its credits):
//     CreditLine
//   for each direct lane with src == m (its staging area):
//     depth blocks of staging_stride bytes, each [seq u64][payload]
//
// Slot (every field little-endian, the slot 64-byte aligned):
//   [seq u64][len u64][crc32c u32][pad u32][payload, len bytes, padded to 8][guard u64 = ~seq]
// seq 0 means empty; messages on a lane are numbered 1, 2, ...; message s
// lives in slot (s - 1) mod depth. The guard follows the payload, so a slot
// image is 32 + round8(len) bytes; capacity bounds len.
//
// Direct lanes (capacity > direct_bytes and no mapping of the reader's
// memory on the writer: docs/rma.md "Large messages"): a slot holds a
// message of at most direct_bytes inline (kind 0 in the pad word) or, for a
// longer one, a descriptor (kind 1): len and crc32c describe the payload,
// the slot's payload is [offset u64], where the payload lies in the
// writer's region (its staging block for slot (s - 1) mod depth), and the
// reader fetches it from there with one get. Slots of a direct lane are
// sized for max(direct_bytes, 8) bytes; the capacity is in the staging area.
// A mapped lane has slots of its whole capacity whatever direct_bytes says:
// through a mapping the chunked copies into the slot and out of it overlap,
// which a descriptor's two copies cannot.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace grove::rma {

enum class RingMode : uint8_t { safe = 0, raw = 1 };

struct LaneSpec {
  int src = 0;
  int dst = 0;
  uint32_t depth = 0;
  uint64_t capacity = 0;  // the longest message, bytes
  bool operator==(const LaneSpec&) const = default;
};

inline constexpr size_t kSlotHeader = 24;  // seq, len, crc32c, pad
inline constexpr size_t kGuardBytes = 8;
inline constexpr size_t kCacheLine = 64;
inline constexpr uint32_t kMaxDepth = 1u << 20;
inline constexpr uint64_t kMaxCapacity = uint64_t{1} << 30;
// direct_bytes that makes no lane direct.
inline constexpr uint64_t kNeverDirect = ~uint64_t{0};
// The pad word of a slot: what its payload is.
inline constexpr uint32_t kSlotInline = 0;
inline constexpr uint32_t kSlotDescriptor = 1;
inline constexpr size_t kDescriptorBytes = 8;  // [offset u64]
// An inline payload whose crc32c covers only its first (kind >> 8) * 64
// bytes (ring_crc_bytes; docs/rma.md "Large messages"): the low byte of
// the pad word says this, the rest how much. Valid only when that is more
// than 0 and less than the length (else the writer would use kSlotInline).
inline constexpr uint32_t kSlotInlinePrefix = 2;
inline uint32_t prefix_kind(size_t covered) {
  return kSlotInlinePrefix | static_cast<uint32_t>(covered / 64) << 8;
}
// The bytes an inline slot's CRC covers, or nothing for a kind that is not
// inline or does not fit `length`.
inline std::optional<size_t> crc_covered(uint32_t kind, size_t length) {
  if (kind == kSlotInline) return length;
  if ((kind & 0xff) != kSlotInlinePrefix) return std::nullopt;
  const size_t covered = size_t{kind >> 8} * 64;
  if (covered == 0 || covered >= length) return std::nullopt;
  return covered;
}

struct SlotHeader {
  std::atomic<uint64_t> seq;
  uint64_t len;
  uint32_t crc;
  uint32_t kind;  // kSlotInline or kSlotDescriptor
};
static_assert(sizeof(SlotHeader) == kSlotHeader);

// Written by the writer, read by the reader: the progress of a message being
// written in pieces, (seq mod 2^32) << 32 | payload bytes written so far,
// and on the same line a single-copy offer (below). Then one line written
// by the reader: its sleeping word (kAwake, or how it sleeps waiting for a
// slot).
// A sleeping word's values. kSleepOnFutex: the waiter sleeps on the word
// itself; the publisher clears it and wakes the futex. kSleepOnTransport: it
// sleeps on its transport's fd; the publisher sends it a wake-up message.
inline constexpr uint32_t kAwake = 0;
inline constexpr uint32_t kSleepOnFutex = 1;
inline constexpr uint32_t kSleepOnTransport = 2;

// A single-copy offer (ring_single_copy.cpp; docs/rma.md "Large
// messages"): where message `offer` lies in the writer's memory, for the
// reader to copy straight into its receive buffer. `crc` is the CRC-32C of
// the offered seq followed by the fields before it, so a damaged offer is
// never read from; `payload_crc` is the payload's when flags has
// kOfferPayloadCrc (ring_single_copy_crc).
struct OfferBody {
  uint64_t address;        // the payload, in the writer's address space
  uint64_t len;            // its length
  uint64_t token_address;  // a word of the writer's holding `token`: the
  uint64_t token;          //   reader checks it once per writer pid
  int32_t pid;             // the writer's process
  uint32_t flags;
  uint32_t payload_crc;
  uint32_t crc;
};
static_assert(sizeof(OfferBody) == 48);
inline constexpr uint32_t kOfferPayloadCrc = 1;
// The offer word's states: the offered seq alone (open), or with one of
// these bits: the reader took it (it is copying; the writer waits for its
// credit), declined it (the writer writes it into the slot instead), or
// refused it (the same, and the writer offers nothing more on the lane: the
// reader cannot read its memory). 0: nothing offered, or taken back by the
// writer (which then writes the slot).
inline constexpr uint64_t kOfferTaken = uint64_t{1} << 63;
inline constexpr uint64_t kOfferDeclined = uint64_t{1} << 62;
inline constexpr uint64_t kOfferRefused = uint64_t{1} << 61;

struct alignas(kCacheLine) LaneHeader {
  std::atomic<uint64_t> progress;
  std::atomic<uint64_t> offer;  // see kOfferTaken; written by both sides
  OfferBody offer_body;         // written by the writer before `offer`
  std::atomic<uint32_t> reader_sleeping;
  char pad1[kCacheLine - 4];
};
static_assert(sizeof(LaneHeader) == 2 * kCacheLine);

// In the writer's memory: the reader's cumulative count of messages it
// consumed (safe mode), then one line written by the writer: its sleeping
// word (kAwake, or how it sleeps waiting for credits).
struct alignas(kCacheLine) CreditLine {
  std::atomic<uint64_t> acked;
  char pad0[kCacheLine - 8];
  std::atomic<uint32_t> writer_sleeping;
  char pad1[kCacheLine - 4];
};
static_assert(sizeof(CreditLine) == 2 * kCacheLine);

inline size_t round8(size_t n) {
  return (n + 7) / 8 * 8;
}
inline size_t slot_stride(uint64_t capacity) {
  return (kSlotHeader + round8(capacity) + kGuardBytes + kCacheLine - 1) / kCacheLine * kCacheLine;
}
// Bytes of the slot image of a message of `len` bytes.
inline size_t image_bytes(size_t len) {
  return kSlotHeader + round8(len) + kGuardBytes;
}

class RingLayout {
 public:
  // Validates and sorts `lanes` (by src, then dst) for a group of `size`
  // members. Throws grove::Error(invalid_argument) naming `rank`, the lane
  // and the cause: a rank outside the group, src == dst, a zero or too large
  // depth, a capacity above kMaxCapacity, two lanes with one (src, dst).
  // Every lane starts unmapped (set_mapped below); a lane whose capacity
  // exceeds `direct_bytes` is then direct (see above).
  RingLayout(std::vector<LaneSpec> lanes, RingMode mode, int size, int rank,
             uint64_t direct_bytes = kNeverDirect);

  RingMode mode() const { return mode_; }
  int size() const { return size_; }
  const std::vector<LaneSpec>& lanes() const { return lanes_; }
  // Index of the lane (src, dst), or -1.
  int find(int src, int dst) const;

  size_t region_bytes(int member) const { return region_bytes_[static_cast<size_t>(member)]; }
  // In the destination's region: the lane's header, then its slots.
  size_t inbox_offset(int lane) const { return inbox_offset_[static_cast<size_t>(lane)]; }
  size_t slot_offset(int lane, uint64_t seq) const;
  // In the source's region.
  size_t credit_offset(int lane) const { return credit_offset_[static_cast<size_t>(lane)]; }

  // Whether the lane's writer maps the reader's memory (set_mapped; every
  // member learns it when the ring is created, ring_endpoint.cpp). A mapped
  // lane is never direct: its slots hold the whole capacity.
  bool mapped(int lane) const { return mapped_[static_cast<size_t>(lane)]; }
  // Sets mapped() by lane index (in lanes() order) and places everything
  // again.
  void set_mapped(std::vector<bool> mapped);
  // Whether some lane's capacity exceeds direct_bytes, so that mapped()
  // changes the layout.
  bool mapping_matters() const;
  // Whether messages above direct_bytes travel by descriptor on this lane:
  // its capacity exceeds direct_bytes and it is not mapped.
  bool direct(int lane) const {
    return lanes_[static_cast<size_t>(lane)].capacity > direct_bytes_ && !mapped(lane);
  }
  // The longest payload a slot of the lane holds, and the slot stride.
  uint64_t inline_capacity(int lane) const;
  size_t stride(int lane) const { return slot_stride(inline_capacity(lane)); }
  // Direct lanes, in the source's region: the staging area (depth blocks of
  // staging_stride bytes; block i holds the payload of the message in slot
  // i). Zero for other lanes.
  size_t staging_offset(int lane) const { return staging_offset_[static_cast<size_t>(lane)]; }
  size_t staging_stride(int lane) const;

  // The agreement header (mode and lanes, sorted), identical on every
  // member that was given the same lanes and mode.
  std::vector<std::byte> encode() const;
  // Throws grove::Error(mismatch) naming `other_rank` and the first
  // difference between `other` (its encode()) and this layout.
  void check_same(std::span<const std::byte> other, int other_rank, int rank) const;

  static std::string describe(const LaneSpec& lane);  // "0 -> 1 (depth 8, capacity 256 B)"
  static std::string_view mode_name(RingMode mode);

 private:
  void place();  // the offsets, from lanes_ and mapped_

  RingMode mode_;
  int size_;
  uint64_t direct_bytes_;
  std::vector<LaneSpec> lanes_;
  std::vector<bool> mapped_;
  std::vector<size_t> region_bytes_, inbox_offset_, credit_offset_, staging_offset_;
};

}  // namespace grove::rma
