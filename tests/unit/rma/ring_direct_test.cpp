// Ring lanes with a direct payload path (ring_direct_bytes; docs/rma.md
// "Large messages") in one process (MemoryWorld): the layout, which lanes
// are direct (only those whose writer has no mapping of the reader's
// memory), exact bytes below, at and above the threshold in both modes
// through a mapping (slots, chunked) and through put/get (descriptors),
// staging blocks gated by credits, raw overwrites during a fetch and loss,
// and bad descriptors and payloads counted corrupt.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "core/params.hpp"
#include "rma/ring_endpoint.hpp"
#include "support/memory_world.hpp"
#include "support/world_group.hpp"

namespace grove::rma {
namespace {

using grove::testing::WorldGroups;

constexpr uint64_t kThreshold = 4096;
constexpr uint64_t kCapacity = 256 * 1024;

std::vector<std::byte> direct_message(uint64_t seq, size_t length) {
  std::vector<std::byte> m(length);
  for (size_t i = 0; i < length; ++i)
    m[i] = static_cast<std::byte>((seq * 31 + i * 7 + i / 251) & 0xff);
  return m;
}

struct DirectRig {
  params::ScopedSet direct{"ring_direct_bytes", std::to_string(kThreshold)};
  MemoryWorld world;
  WorldGroups groups;
  std::vector<std::unique_ptr<RingEndpoint>> ends;

  DirectRig(bool mapped, RingMode mode, uint32_t depth)
      : world(2, MemoryWorld::Options{0, MemoryWorld::SendMode::eager, true, mapped}),
        groups(world) {
    const std::vector<LaneSpec> lanes{{0, 1, depth, kCapacity}};
    ends = groups.construct_all<RingEndpoint>(
        [&](int r) { return std::make_unique<RingEndpoint>(groups.group(r), lanes, mode); });
  }
  RingEndpoint& writer() { return *ends[0]; }
  RingEndpoint& reader() { return *ends[1]; }
  LaneCounters in() { return reader().counters()[0]; }
  LaneCounters out() { return writer().counters()[0]; }
  size_t recv(std::span<std::byte> out) {
    std::optional<size_t> got;
    world.run_until([&] { return (got = reader().try_recv(0, out)).has_value(); }, 10000,
                    "ring recv");
    return *got;
  }
  void settle() {
    for (int i = 0; i < 8; ++i)
      world.progress_all();
  }
  // Slot i of the lane in the reader's memory; block i in the writer's.
  std::byte* slot(uint64_t seq) {
    return reader().local_memory() + reader().layout().slot_offset(0, seq);
  }
  std::byte* block(uint64_t seq) {
    const RingLayout& l = writer().layout();
    return writer().local_memory() + l.staging_offset(0) +
           ((seq - 1) % l.lanes()[0].depth) * l.staging_stride(0);
  }
};

TEST(RingDirectLayout, SmallSlotsAndAStagingAreaOnTheWriter) {
  RingLayout l({{0, 1, 4, kCapacity}, {1, 0, 2, 4096}}, RingMode::safe, 2, 0, kThreshold);
  EXPECT_TRUE(l.direct(0));
  EXPECT_FALSE(l.direct(1));  // capacity == threshold: every message fits a slot
  EXPECT_EQ(l.inline_capacity(0), kThreshold);
  EXPECT_EQ(l.inline_capacity(1), 4096u);
  EXPECT_EQ(l.stride(0), slot_stride(kThreshold));
  EXPECT_EQ(l.staging_stride(0), (8 + kCapacity + 63) / 64 * 64);
  EXPECT_EQ(l.staging_stride(1), 0u);
  // Rank 0: inbox of lane 1, credit line of lane 0, then lane 0's blocks.
  EXPECT_EQ(l.credit_offset(0), sizeof(LaneHeader) + 2 * slot_stride(4096));
  EXPECT_EQ(l.staging_offset(0), l.credit_offset(0) + sizeof(CreditLine));
  EXPECT_EQ(l.region_bytes(0), l.staging_offset(0) + 4 * l.staging_stride(0));
  EXPECT_EQ(l.region_bytes(1),
            sizeof(LaneHeader) + 4 * slot_stride(kThreshold) + sizeof(CreditLine));
  // A threshold below a descriptor still leaves room for one.
  RingLayout tiny({{0, 1, 4, 100}}, RingMode::raw, 2, 0, 0);
  EXPECT_EQ(tiny.inline_capacity(0), kDescriptorBytes);
  // Mapped, the same lane keeps whole slots and stages nothing.
  RingLayout mapped({{0, 1, 4, kCapacity}, {1, 0, 2, 4096}}, RingMode::safe, 2, 0, kThreshold);
  EXPECT_TRUE(mapped.mapping_matters());
  mapped.set_mapped({true, true});
  EXPECT_TRUE(mapped.mapped(0));
  EXPECT_FALSE(mapped.direct(0));
  EXPECT_EQ(mapped.inline_capacity(0), kCapacity);
  EXPECT_EQ(mapped.stride(0), slot_stride(kCapacity));
  EXPECT_EQ(mapped.staging_stride(0), 0u);
  EXPECT_EQ(mapped.region_bytes(0),
            sizeof(LaneHeader) + 2 * slot_stride(4096) + sizeof(CreditLine));
  EXPECT_EQ(mapped.region_bytes(1),
            sizeof(LaneHeader) + 4 * slot_stride(kCapacity) + sizeof(CreditLine));
  // The mapping is part of the agreement.
  try {
    l.check_same(mapped.encode(), 1, 0);
    ADD_FAILURE() << "a mapped and an unmapped layout were accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::mismatch);
    EXPECT_NE(std::string(e.what()).find("lane 0 -> 1 (depth 4, capacity 262144 B) is mapped "
                                         "there, not mapped here"),
              std::string::npos)
        << e.what();
  }
  // Below the threshold the mapping changes nothing.
  EXPECT_FALSE(RingLayout({{0, 1, 4, 4096}}, RingMode::safe, 2, 0, kThreshold).mapping_matters());
  RingLayout other({{0, 1, 4, kCapacity}, {1, 0, 2, 4096}}, RingMode::safe, 2, 1, 8192);
  try {
    l.check_same(other.encode(), 1, 0);
    ADD_FAILURE() << "different thresholds were accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::mismatch);
    EXPECT_NE(std::string(e.what()).find("ring_direct_bytes 8192 there, 4096 here"),
              std::string::npos)
        << e.what();
  }
}

// Below, at and above the threshold, in both modes, through a mapping and
// through put/get: exact bytes, and the slot and the counters say which
// path each message took. Through a mapping the lane is not direct: every
// message is in its slot, and safe mode copies those above ring_chunk_bytes
// (16 KiB) chunk by chunk. Through put/get those above the threshold go by
// descriptor.
TEST(RingDirect, ExactBytesOnBothSidesOfTheThreshold) {
  const std::vector<size_t> sizes{64, 4095, 4096, 4097, 32768, 65536 + 9, kCapacity};
  for (bool mapped : {true, false}) {
    for (RingMode mode : {RingMode::safe, RingMode::raw}) {
      SCOPED_TRACE(std::string(mapped ? "mapped " : "put/get ") +
                   std::string(RingLayout::mode_name(mode)));
      DirectRig rig(mapped, mode, 4);
      EXPECT_EQ(rig.writer().layout().mapped(0), mapped);
      EXPECT_EQ(rig.reader().layout().direct(0), !mapped);
      std::vector<std::byte> out(kCapacity);
      uint64_t seq = 0;
      for (size_t length : sizes) {
        ++seq;
        ASSERT_TRUE(rig.writer().try_send(1, direct_message(seq, length)));
        rig.settle();
        const auto* header = reinterpret_cast<const SlotHeader*>(rig.slot(seq));
        // Through a mapping the CRC of a payload above ring_crc_bytes (2 KiB
        // by default) covers its first 2 KiB (kSlotInlinePrefix).
        EXPECT_EQ(header->kind, !mapped && length > kThreshold ? kSlotDescriptor
                                : mapped && length > 2048      ? prefix_kind(2048)
                                                               : kSlotInline)
            << length;
        EXPECT_EQ(header->len, length);
        std::fill(out.begin(), out.end(), std::byte{0});
        ASSERT_EQ(rig.recv(out), length);
        EXPECT_TRUE(std::equal(out.begin(), out.begin() + static_cast<ptrdiff_t>(length),
                               direct_message(seq, length).begin()))
            << length << " B";
        EXPECT_EQ(out[length % kCapacity],
                  length == kCapacity ? direct_message(seq, 1)[0] : std::byte{0})
            << "written past the message";
      }
      const LaneCounters c = rig.in();
      EXPECT_EQ(c.delivered, sizes.size());
      EXPECT_EQ(c.lost, 0u);
      EXPECT_EQ(c.corrupt, 0u);
      // 32768, 65545 and 262144 B are above the 16 KiB chunk; 4097 and up
      // above the threshold.
      const LaneCounters w = rig.out();
      EXPECT_EQ(w.sent, sizes.size());
      EXPECT_EQ(w.chunked, mapped && mode == RingMode::safe ? 3u : 0u);
      EXPECT_EQ(w.by_descriptor, mapped ? 0u : 4u);
    }
  }
}

// A mapped lane whose capacity exceeds the threshold is an ordinary one:
// whole slots in the reader's memory, nothing staged in the writer's, and
// a message the writer is still copying in chunks is copied out chunk by
// chunk by a reader that looks meanwhile.
TEST(RingDirect, AMappedLaneKeepsLargeMessagesInItsSlots) {
  DirectRig rig(true, RingMode::safe, 2);
  const RingLayout& layout = rig.writer().layout();
  EXPECT_EQ(layout.staging_offset(0), 0u);
  EXPECT_EQ(layout.region_bytes(0), sizeof(CreditLine));
  EXPECT_EQ(layout.region_bytes(1), sizeof(LaneHeader) + 2 * slot_stride(kCapacity));
  EXPECT_EQ(rig.reader().layout().encode(), layout.encode());
  // Message 1 partly written: the writer published its first 16 KiB.
  const auto body = direct_message(1, 100000);
  std::byte* slot = rig.slot(1);
  auto* header = reinterpret_cast<SlotHeader*>(slot);
  header->len = body.size();
  // As the writer does before its first chunk: the CRC covers the first
  // ring_crc_bytes (2 KiB by default).
  header->kind = prefix_kind(2048);
  std::memcpy(slot + kSlotHeader, body.data(), 16384);
  auto* lane_header = reinterpret_cast<LaneHeader*>(rig.reader().local_memory() +
                                                    rig.reader().layout().inbox_offset(0));
  lane_header->progress.store((uint64_t{1} << 32) | 16384);
  std::vector<std::byte> out(kCapacity, std::byte{0});
  EXPECT_FALSE(rig.reader().try_recv(0, out).has_value());
  EXPECT_TRUE(std::equal(out.begin(), out.begin() + 16384, body.begin()));
  EXPECT_EQ(out[16384], std::byte{0}) << "copied past what was published";
  EXPECT_EQ(rig.in().delivered, 0u);
  // The writer now writes message 1 whole (rewriting the published part
  // with the same bytes) and seq: the reader copies the rest.
  ASSERT_TRUE(rig.writer().try_send(1, body));
  ASSERT_EQ(rig.recv(out), body.size());
  EXPECT_TRUE(std::equal(body.begin(), body.end(), out.begin()));
  EXPECT_EQ(rig.out().chunked, 1u);
  EXPECT_EQ(rig.out().by_descriptor, 0u);
  EXPECT_EQ(rig.in().corrupt, 0u);
}

// Safe mode: a staging block is reused only after its message was fetched
// (the credit gate): the third large message waits for the first fetch.
TEST(RingDirect, SafeStagingBlocksFollowTheCredits) {
  for (bool mapped : {true, false}) {
    DirectRig rig(mapped, RingMode::safe, 2);
    std::vector<std::byte> out(kCapacity);
    ASSERT_TRUE(rig.writer().try_send(1, direct_message(1, 50000)));
    ASSERT_TRUE(rig.writer().try_send(1, direct_message(2, 60000)));
    rig.settle();
    EXPECT_FALSE(rig.writer().try_send(1, direct_message(3, 70000)));
    EXPECT_EQ(rig.writer().counters()[0].waits, 1u);
    ASSERT_EQ(rig.recv(out), 50000u);
    EXPECT_TRUE(std::equal(out.begin(), out.begin() + 50000, direct_message(1, 50000).begin()));
    rig.world.run_until([&] { return rig.writer().try_send(1, direct_message(3, 70000)); }, 1000,
                        "credit");
    ASSERT_EQ(rig.recv(out), 60000u);
    EXPECT_TRUE(std::equal(out.begin(), out.begin() + 60000, direct_message(2, 60000).begin()));
    ASSERT_EQ(rig.recv(out), 70000u);
    EXPECT_TRUE(std::equal(out.begin(), out.begin() + 70000, direct_message(3, 70000).begin()));
    EXPECT_EQ(rig.in().delivered, 3u);
    EXPECT_EQ(rig.in().corrupt, 0u);
  }
}

// Raw mode: ten large messages through four slots leave 7..10 (mapped or
// not); a staging block rewritten under a fetch (its seq moved on) is
// neither delivered nor corrupt, and the message it held counts as lost
// once the slot shows the newer one.
TEST(RingDirect, RawOverwritesCountLossNeverTornPayloads) {
  for (bool mapped : {true, false}) {
    SCOPED_TRACE(mapped ? "mapped" : "put/get");
    {
      DirectRig rig(mapped, RingMode::raw, 4);
      for (uint64_t s = 1; s <= 10; ++s)
        ASSERT_TRUE(rig.writer().try_send(1, direct_message(s, 5000 + 1000 * s)));
      rig.settle();
      std::vector<std::byte> out(kCapacity);
      for (uint64_t s = 7; s <= 10; ++s) {
        ASSERT_EQ(rig.recv(out), 5000 + 1000 * s);
        EXPECT_TRUE(std::equal(out.begin(), out.begin() + 5000 + 1000 * static_cast<ptrdiff_t>(s),
                               direct_message(s, 5000 + 1000 * s).begin()))
            << s;
      }
      EXPECT_FALSE(rig.reader().try_recv(0, out).has_value());
      EXPECT_EQ(rig.in().delivered, 4u);
      EXPECT_EQ(rig.in().lost, 6u);
      EXPECT_EQ(rig.in().corrupt, 0u);
      EXPECT_EQ(rig.in().max_lag, 7u);
    }
    if (mapped) continue;  // no staging blocks through a mapping
    DirectRig rig(mapped, RingMode::raw, 4);
    ASSERT_TRUE(rig.writer().try_send(1, direct_message(1, 9000)));
    rig.settle();
    // The writer has begun staging message 5 in block 0.
    auto* block_seq = reinterpret_cast<std::atomic<uint64_t>*>(rig.block(1));
    block_seq->store(5);
    std::vector<std::byte> out(kCapacity);
    EXPECT_FALSE(rig.reader().try_recv(0, out).has_value());
    EXPECT_EQ(rig.in().delivered, 0u);
    EXPECT_EQ(rig.in().corrupt, 0u);
    for (uint64_t s = 2; s <= 5; ++s)
      ASSERT_TRUE(rig.writer().try_send(1, direct_message(s, 9000 + s)));
    rig.settle();
    for (uint64_t s = 2; s <= 5; ++s) {
      ASSERT_EQ(rig.recv(out), 9000 + s);
      EXPECT_TRUE(std::equal(out.begin(), out.begin() + 9000 + static_cast<ptrdiff_t>(s),
                             direct_message(s, 9000 + s).begin()))
          << s;
    }
    EXPECT_EQ(rig.in().delivered + rig.in().lost, 5u);
    EXPECT_EQ(rig.in().lost, 1u);
    EXPECT_EQ(rig.in().corrupt, 0u);
  }
}

// Raw soak in one process: sizes on both sides of the threshold, the reader
// looking every third message; delivered + lost == sent, the delivered
// ones exact.
TEST(RingDirect, RawSoakKeepsTheInvariant) {
  for (bool mapped : {true, false}) {
    DirectRig rig(mapped, RingMode::raw, 2);
    std::vector<std::byte> out(kCapacity);
    const std::vector<size_t> sizes{100, 4096, 4097, 20000, kCapacity};
    auto length_of = [&](uint64_t s) { return sizes[s % sizes.size()] - (s % 3); };
    uint64_t delivered_seen = 0;
    auto drain = [&] {
      while (auto got = rig.reader().try_recv(0, out)) {
        // The message's seq is not in its bytes: find it from the counters.
        const LaneCounters c = rig.in();
        const uint64_t s = c.delivered + c.lost;
        ASSERT_EQ(*got, length_of(s)) << "message " << s;
        ASSERT_TRUE(std::equal(out.begin(), out.begin() + static_cast<ptrdiff_t>(*got),
                               direct_message(s, *got).begin()))
            << "message " << s;
        ++delivered_seen;
      }
    };
    constexpr uint64_t kSent = 300;
    for (uint64_t s = 1; s <= kSent; ++s) {
      ASSERT_TRUE(rig.writer().try_send(1, direct_message(s, length_of(s))));
      rig.world.progress_all();
      if (s % 3 == 0) drain();
    }
    rig.settle();
    drain();
    const LaneCounters c = rig.in();
    EXPECT_EQ(c.delivered + c.lost, kSent) << (mapped ? "mapped" : "put/get");
    EXPECT_EQ(c.delivered, delivered_seen);
    EXPECT_GT(c.lost, 0u);
    EXPECT_EQ(c.corrupt, 0u);
  }
}

// A descriptor that points elsewhere (outside the writer's region, or at
// another block) and a payload whose CRC does not match are counted
// corrupt, never delivered, and nothing is read for a bad descriptor;
// once repaired the message is delivered exactly.
TEST(RingDirect, BadDescriptorsAndPayloadsAreCorrupt) {
  {
    DirectRig rig(false, RingMode::safe, 4);
    const auto body = direct_message(1, 10000);
    ASSERT_TRUE(rig.writer().try_send(1, body));
    rig.settle();
    std::byte* offset_field = rig.slot(1) + kSlotHeader;
    uint64_t good = 0;
    std::memcpy(&good, offset_field, 8);
    std::vector<std::byte> out(kCapacity, std::byte{0x5a});
    for (uint64_t bad : {uint64_t{1} << 40, good - 8, good + 64}) {
      std::memcpy(offset_field, &bad, 8);
      EXPECT_FALSE(rig.reader().try_recv(0, out).has_value()) << bad;
      EXPECT_EQ(out[0], std::byte{0x5a}) << "read through a bad descriptor " << bad;
    }
    EXPECT_EQ(rig.in().corrupt, 1u);  // once per message
    std::memcpy(offset_field, &good, 8);
    // The payload differs from its CRC.
    std::byte* payload = rig.block(1) + 8;
    payload[777] ^= std::byte{0x01};
    EXPECT_FALSE(rig.reader().try_recv(0, out).has_value());
    EXPECT_EQ(rig.in().delivered, 0u);
    payload[777] ^= std::byte{0x01};
    ASSERT_EQ(rig.recv(out), 10000u);
    EXPECT_TRUE(std::equal(out.begin(), out.begin() + 10000, body.begin()));
    // Message 2: a CRC mismatch is a second corrupt message.
    ASSERT_TRUE(rig.writer().try_send(1, direct_message(2, 8000)));
    rig.settle();
    rig.block(2)[8 + 10] ^= std::byte{0x80};
    EXPECT_FALSE(rig.reader().try_recv(0, out).has_value());
    EXPECT_EQ(rig.in().corrupt, 2u);
    // Safe mode: a block whose seq is not the message's is corrupt too.
    rig.block(2)[8 + 10] ^= std::byte{0x80};
    reinterpret_cast<std::atomic<uint64_t>*>(rig.block(2))->store(6);
    EXPECT_FALSE(rig.reader().try_recv(0, out).has_value());
    EXPECT_EQ(rig.in().corrupt, 2u);  // still message 2
    reinterpret_cast<std::atomic<uint64_t>*>(rig.block(2))->store(2);
    ASSERT_EQ(rig.recv(out), 8000u);
    EXPECT_TRUE(std::equal(out.begin(), out.begin() + 8000, direct_message(2, 8000).begin()));
    EXPECT_EQ(rig.in().delivered, 2u);
  }
}

// A receive buffer shorter than a large message: truncated, nothing
// consumed, nothing fetched.
TEST(RingDirect, ShortBufferIsTruncatedBeforeTheFetch) {
  for (bool mapped : {true, false}) {
    DirectRig rig(mapped, RingMode::safe, 2);
    ASSERT_TRUE(rig.writer().try_send(1, direct_message(1, 30000)));
    rig.settle();
    std::vector<std::byte> small(20000), enough(30000);
    try {
      (void)rig.reader().try_recv(0, small);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::truncated);
      EXPECT_NE(std::string(e.what()).find("message 1 has 30000 B, the receive buffer 20000 B"),
                std::string::npos)
          << e.what();
    }
    ASSERT_EQ(rig.recv(enough), 30000u);
    EXPECT_EQ(enough, direct_message(1, 30000));
  }
}

// A fetch whose writer never answers (MemoryWorld::hold_rma) times out and
// breaks the ring, and the receive does not return while the get could
// still write the receive buffer: a writer that answers later writes
// nothing into it.
TEST(RingDirect, AFetchThatTimesOutNeverWritesTheBufferLater) {
  params::ScopedSet timeout("timeout_ms", "50");
  params::ScopedSet cancel_wait("cancel_wait_ms", "20");
  DirectRig rig(false, RingMode::safe, 2);
  ASSERT_TRUE(rig.writer().try_send(1, direct_message(1, 9000)));
  rig.settle();
  rig.world.hold_rma(0);
  std::vector<std::byte> out(kCapacity, std::byte{0x5a});
  std::string error = "no error";
  try {
    (void)rig.reader().try_recv(0, out);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::timeout);
    error = e.what();
  }
  EXPECT_NE(error.find("fetch of message 1 (9000 B)"), std::string::npos) << error;
  EXPECT_EQ(error.find("could not be stopped"), std::string::npos) << error;
  rig.world.release_rma(0);
  rig.settle();
  EXPECT_EQ(std::count(out.begin(), out.end(), std::byte{0x5a}), static_cast<ptrdiff_t>(kCapacity))
      << "the abandoned fetch wrote into the receive buffer";
  EXPECT_EQ(rig.in().delivered, 0u);
  // The ring is broken: the same error again, nothing fetched.
  try {
    (void)rig.reader().try_recv(0, out);
    ADD_FAILURE() << "a broken ring received";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), error);
  }
}

// Which lanes are mapped is learnt from the writers' answers (bytes from
// other processes): an answer of the wrong size is a named protocol error
// on every rank, and no ring is created.
class CutAnswers final : public Group {
 public:
  explicit CutAnswers(std::shared_ptr<Group> inner) : inner_(std::move(inner)) {}
  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  Transport& transport() override { return inner_->transport(); }
  int notice_fd() const override { return inner_->notice_fd(); }
  bool departed(int member) override { return inner_->departed(member); }
  std::vector<std::vector<std::byte>> allgather(std::span<const std::byte> mine,
                                                std::string_view what) override {
    auto all = inner_->allgather(mine, what);
    if (++calls_ == 2) all[0].clear();  // the second: which lanes rank 0 maps
    return all;
  }
  void barrier(std::string_view what) override { inner_->barrier(what); }
  void register_wakeup(uint16_t id) override { inner_->register_wakeup(id); }

 private:
  std::shared_ptr<Group> inner_;
  int calls_ = 0;
};

TEST(RingDirect, AMalformedMappingAnswerIsNamed) {
  params::ScopedSet direct{"ring_direct_bytes", std::to_string(kThreshold)};
  MemoryWorld world(2);
  WorldGroups groups(world);
  std::vector<std::string> errors;
  EXPECT_THROW(groups.construct_all<RingEndpoint>(
                   [&](int r) {
                     return std::make_unique<RingEndpoint>(
                         std::make_shared<CutAnswers>(groups.group(r)),
                         std::vector<LaneSpec>{{0, 1, 2, kCapacity}}, RingMode::safe);
                   },
                   &errors),
               Error);
  ASSERT_EQ(errors.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(errors[static_cast<size_t>(r)],
              fmt::format("rank {}: ring(safe, 1 lanes): rank 0 answered 0 bytes for 1 lanes "
                          "when asked which lanes it maps; no ring was created",
                          r));
  }
}

}  // namespace
}  // namespace grove::rma
