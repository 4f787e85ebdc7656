#pragma once
// The wire tag. A transport-level tag has 44 bits; a backend may use the
// remaining 20 bits of a 64-bit wire tag for the source rank (UCX does, so a
// receive can name its peer). Layout of the 44 bits, high to low:
//
//   context id  12 bits   the communicator (Comm::split/dup get fresh ones)
//   sequence    16 bits   the operation's number on that communicator
//   topology     2 bits   none, routing, release (runtime protocols),
//                         point_to_point
//   stamp        8 bits   hash of (collective, algorithm, parameters)
//   channel      6 bits   a phase inside one schedule
//
// Two operations, two topologies or two communicators never alias while
// fewer than 65536 operations are in flight on one communicator. Peers that
// disagree on the algorithm differ in `stamp`, which a probe can detect.
//
// Point-to-point messages (Comm::send/recv) have topology point_to_point,
// which no collective or runtime protocol uses, and carry the user's 30-bit
// tag in the 30 bits of sequence, stamp and channel (its high 16 bits where
// the sequence goes, its low 14 bits in stamp and channel):
//
//   context id 12 | user tag >> 14: 16 | point_to_point 2 | user tag & 0x3fff: 14
//
// so a user's message never matches a collective's receive, nor the
// reverse, whatever its tag.

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

enum class Topology : uint8_t { none = 0, routing = 1, release = 2, point_to_point = 3 };

inline constexpr int kUserTagBits = kSequenceBits + kStampBits + kChannelBits;
inline constexpr uint32_t kMaxUserTag = (1u << kUserTagBits) - 1;
inline constexpr Tag kContextMask = ((Tag{1} << kContextBits) - 1) << kContextShift;
inline constexpr Tag kTopologyMask = ((Tag{1} << kTopologyBits) - 1) << kTopologyShift;
// The bits of a point-to-point tag that hold the user's tag.
inline constexpr Tag kUserTagMask = kTagMask & ~kContextMask & ~kTopologyMask;
inline constexpr int kUserTagLowBits = kTopologyShift;  // 14: stamp and channel

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
// A point-to-point message's wire tag (see above).
constexpr Tag make_p2p(uint32_t context, uint32_t user_tag) {
  const Tag low = Tag{user_tag} & ((Tag{1} << kUserTagLowBits) - 1);
  const Tag high = (Tag{user_tag} >> kUserTagLowBits) & ((Tag{1} << kSequenceBits) - 1);
  return (Tag{context & ((1u << kContextBits) - 1)} << kContextShift) | (high << kSequenceShift) |
         (Tag{static_cast<uint32_t>(Topology::point_to_point)} << kTopologyShift) | low;
}
constexpr uint32_t user_tag(Tag t) {
  const Tag low = t & ((Tag{1} << kUserTagLowBits) - 1);
  const Tag high = (t >> kSequenceShift) & ((Tag{1} << kSequenceBits) - 1);
  return static_cast<uint32_t>((high << kUserTagLowBits) | low);
}
static_assert(user_tag(make_p2p(5, kMaxUserTag)) == kMaxUserTag);
static_assert(user_tag(make_p2p(5, 0x2345678)) == 0x2345678);
static_assert(topology(make_p2p(5, kMaxUserTag)) == Topology::point_to_point);

constexpr Tag with_channel(Tag base, uint32_t channel) {
  return (base & ~kChannelMask) | (Tag{channel & ((1u << kChannelBits) - 1)} << kChannelShift);
}

}  // namespace tag
}  // namespace grove
