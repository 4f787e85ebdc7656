#pragma once
// The wire tag. A transport-level tag has 44 bits; a backend may use the
// remaining 20 bits of a 64-bit wire tag for the source rank (UCX does, so a
// receive can name its peer). Layout of the 44 bits, high to low:
//
//   context id  12 bits   the communicator (Comm::split/dup get fresh ones)
//   sequence    16 bits   the operation's number on that communicator
//   topology     2 bits   none, routing, release (runtime protocols)
//   stamp        8 bits   hash of (collective, algorithm, parameters)
//   channel      6 bits   a phase inside one schedule
//
// Two operations, two topologies or two communicators never alias while
// fewer than 65536 operations are in flight on one communicator. Peers that
// disagree on the algorithm differ in `stamp`, which a probe can detect.

#include <cstdint>

namespace grove {

using Tag = uint64_t;

namespace tag {

inline constexpr int kContextBits = 12;
inline constexpr int kSequenceBits = 16;
inline constexpr int kTopologyBits = 2;
inline constexpr int kStampBits = 8;
inline constexpr int kChannelBits = 6;
inline constexpr int kTagBits = 44;
inline constexpr int kSourceBits = 64 - kTagBits;  // backends' use only

inline constexpr int kChannelShift = 0;
inline constexpr int kStampShift = kChannelShift + kChannelBits;
inline constexpr int kTopologyShift = kStampShift + kStampBits;
inline constexpr int kSequenceShift = kTopologyShift + kTopologyBits;
inline constexpr int kContextShift = kSequenceShift + kSequenceBits;
static_assert(kContextShift + kContextBits == kTagBits);

inline constexpr Tag kTagMask = (Tag{1} << kTagBits) - 1;
inline constexpr Tag kChannelMask = ((Tag{1} << kChannelBits) - 1) << kChannelShift;
inline constexpr Tag kStampMask = ((Tag{1} << kStampBits) - 1) << kStampShift;

enum class Topology : uint8_t { none = 0, routing = 1, release = 2 };

constexpr Tag make(uint32_t context, uint32_t sequence, Topology topology, uint32_t stamp,
                   uint32_t channel) {
  return (Tag{context & ((1u << kContextBits) - 1)} << kContextShift) |
         (Tag{sequence & ((1u << kSequenceBits) - 1)} << kSequenceShift) |
         (Tag{static_cast<uint32_t>(topology)} << kTopologyShift) |
         (Tag{stamp & ((1u << kStampBits) - 1)} << kStampShift) |
         (Tag{channel & ((1u << kChannelBits) - 1)} << kChannelShift);
}

constexpr uint32_t context(Tag t) {
  return (t >> kContextShift) & ((1u << kContextBits) - 1);
}
constexpr uint32_t sequence(Tag t) {
  return (t >> kSequenceShift) & ((1u << kSequenceBits) - 1);
}
constexpr Topology topology(Tag t) {
  return static_cast<Topology>((t >> kTopologyShift) & ((1u << kTopologyBits) - 1));
}
constexpr uint32_t stamp(Tag t) {
  return (t >> kStampShift) & ((1u << kStampBits) - 1);
}
constexpr uint32_t channel(Tag t) {
  return (t >> kChannelShift) & ((1u << kChannelBits) - 1);
}
constexpr Tag with_channel(Tag base, uint32_t channel) {
  return (base & ~kChannelMask) | (Tag{channel & ((1u << kChannelBits) - 1)} << kChannelShift);
}

}  // namespace tag
}  // namespace grove
