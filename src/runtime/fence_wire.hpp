#pragma once
// The fence's messages on the wire. Every message starts with a FenceHeader
// that stamps the sender's configuration (topology, both radices, whether
// the release leaves the routing tree) and its tree version, so a peer
// configured differently is detected by name instead of hanging, and a
// receiver can tell that the sender has learned of failures it has not.
//
// Active-message ids: one per (topology, communicator context), so each
// topology has its own receive path and two communicators never share one:
//   fence_am_id(t, c) = 0x8000 | t << 12 | (c & 0xfff)
// (routing 0x9000.., release 0xA000..). Nothing else in grove uses AM ids at
// or above 0x8000.
//
// Decoding never trusts its input: a short, long or inconsistent message is
// a grove::Error(protocol) naming the field, never a crash.
//
// Wire format 2: a release carries one SEGMENT of the encoded result (the
// pipelined release, docs/fence.md): the payload's key (origin rank and its
// view version: which result), its total size, the segment's offset and
// bytes. The decoder checks offset + length <= total; a release_up always
// carries the whole payload (offset 0, length = total).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "transport/tag.hpp"

namespace grove::runtime {

inline constexpr uint8_t kFenceWireFormat = 2;

constexpr uint16_t fence_am_id(tag::Topology topology, uint32_t context) {
  return static_cast<uint16_t>(0x8000u | (static_cast<uint32_t>(topology) << 12) |
                               (context & 0xfffu));
}

enum class FenceKind : uint8_t {
  rollup = 1,      // routing: contributions of the sender's subtree, up
  release = 2,     // release topology: the result, down (forward or replay)
  ack = 3,         // release topology: "my subtree holds the result", to whoever asked
  view = 4,        // routing: the failure view (departed set + version), down from the root
  release_up = 5,  // routing: a result whose root departed, carried up to the new root
};
std::string_view fence_kind_name(FenceKind kind);
// "routing", "release" (or "none").
std::string_view topology_name(tag::Topology topology);

struct FenceHeader {
  FenceKind kind = FenceKind::rollup;
  tag::Topology topology = tag::Topology::routing;  // the tree this message travels
  bool low_radix_release = true;                    // sender's low_radix_release
  uint32_t routing_radix = 0;                       // sender's rollup_radix
  uint32_t release_radix = 0;                       // sender's release_radix
  uint32_t context = 0;                             // signature: the communicator
  uint64_t generation = 0;                          // the fence's number on it
  uint64_t tree_version = 0;                        // sender's failure-view version
};

// The result of one fence: what the root decided and everyone receives,
// byte for byte. Departed entries are empty.
struct FenceResult {
  int origin = -1;              // the root that built it
  uint64_t origin_version = 0;  // that root's view version then
  std::vector<int> departed;    // ranks whose entry is empty because they departed
  std::vector<Blob> blobs;      // by rank
};

// Which result a release segment belongs to: the root that built it and its
// view version then (FenceResult::origin, origin_version). A result built by
// a later root has a strictly larger version (its view counts the departure
// of every earlier root), so keys order payloads from older to newer.
struct PayloadKey {
  uint32_t origin = 0;
  uint64_t version = 0;
  friend auto operator<=>(const PayloadKey&, const PayloadKey&) = default;
};

struct FenceMessage {
  FenceHeader header;
  // rollup: the contributions the sender holds, by rank
  std::vector<std::pair<int, Blob>> contributions;
  // release / release_up: bytes [offset, offset + segment length) of the
  // encoded FenceResult (identical bytes everywhere), `total` bytes in all.
  // `payload` owns the bytes; the segment is payload[payload_at ..
  // payload_at + payload_length) (payload_length npos: to its end), so a
  // holder sends slices of its whole payload without copying them first.
  // Decoding yields payload = exactly the segment.
  std::shared_ptr<const Blob> payload;
  size_t payload_at = 0;
  size_t payload_length = static_cast<size_t>(-1);
  PayloadKey key;
  uint64_t total = 0;
  uint64_t offset = 0;
  double release_started = 0;  // release: root's transport time when it started (fence_timing)
  // ack
  bool retired = false;    // the sender no longer holds this generation: every rank had it
  double held_latest = 0;  // latest time a rank of the sender's subtree held the payload
  // view
  std::vector<int> departed;
};

// The segment's bytes (empty without a payload).
std::span<const std::byte> segment_bytes(const FenceMessage& message);

Blob encode_fence_message(const FenceMessage& message);
// Throws grove::Error(protocol) naming the field and the sender.
FenceMessage decode_fence_message(std::span<const std::byte> bytes, int source);

Blob encode_fence_result(const FenceResult& result);
// Throws grove::Error(protocol); `size` is the communicator's size.
FenceResult decode_fence_result(std::span<const std::byte> bytes, int size);

}  // namespace grove::runtime
