// Ring channels in one process (MemoryWorld): the layout and its errors,
// both modes through a mapping and through put/get, credits and waits, raw
// gaps and the loss invariant, corrupted slots (guard, CRC), a lapped slot,
// truncated receives, a message read while it is written.

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "core/params.hpp"
#include "rma/crc32c.hpp"
#include "rma/ring_endpoint.hpp"
#include "rma/slot_copy.hpp"
#include "support/memory_world.hpp"
#include "support/world_group.hpp"

namespace grove::rma {
namespace {

using grove::testing::WorldGroups;

std::vector<std::byte> message(int src, uint64_t seq, size_t length) {
  std::vector<std::byte> m(length);
  for (size_t i = 0; i < length; ++i)
    m[i] = static_cast<std::byte>((src * 131 + seq * 31 + i * 7) & 0xff);
  return m;
}

std::string ring_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return std::string(errc_name(e.code())) + ": " + e.what();
  }
  return "no error";
}

struct RingRig {
  MemoryWorld world;
  WorldGroups groups;
  std::vector<std::unique_ptr<RingEndpoint>> ends;

  RingRig(int n, bool mapped, std::vector<LaneSpec> lanes, RingMode mode)
      : world(n, MemoryWorld::Options{0, MemoryWorld::SendMode::eager, true, mapped}),
        groups(world) {
    ends = groups.construct_all<RingEndpoint>(
        [&](int r) { return std::make_unique<RingEndpoint>(groups.group(r), lanes, mode); });
  }
  LaneCounters counters(int rank, int src, int dst) {
    for (const LaneCounters& c : ends[static_cast<size_t>(rank)]->counters()) {
      if (c.src == src && c.dst == dst) return c;
    }
    ADD_FAILURE() << "no lane " << src << " -> " << dst << " on rank " << rank;
    return {};
  }
  // Receives until a message comes (progressing every rank in between).
  size_t recv(int rank, int src, std::span<std::byte> out) {
    std::optional<size_t> got;
    world.run_until(
        [&] { return (got = ends[static_cast<size_t>(rank)]->try_recv(src, out)).has_value(); },
        10000, "ring recv");
    return *got;
  }
  void settle() {
    for (int i = 0; i < 8; ++i)
      world.progress_all();
  }
};

TEST(RingLayout, SortsLanesAndPlacesThem) {
  RingLayout layout({{2, 0, 4, 100}, {0, 1, 2, 8}, {1, 0, 3, 0}}, RingMode::safe, 3, 0);
  ASSERT_EQ(layout.lanes().size(), 3u);
  EXPECT_EQ(layout.lanes()[0], (LaneSpec{0, 1, 2, 8}));
  EXPECT_EQ(layout.lanes()[1], (LaneSpec{1, 0, 3, 0}));
  EXPECT_EQ(layout.lanes()[2], (LaneSpec{2, 0, 4, 100}));
  EXPECT_EQ(layout.find(2, 0), 2);
  EXPECT_EQ(layout.find(0, 2), -1);
  // Slot strides: 24 + round8(capacity) + 8, to a cache line.
  EXPECT_EQ(slot_stride(0), 64u);
  EXPECT_EQ(slot_stride(8), 64u);
  EXPECT_EQ(slot_stride(100), 192u);
  // Rank 0 reads lanes 1 and 2 and writes lane 0.
  EXPECT_EQ(layout.inbox_offset(1), 0u);
  EXPECT_EQ(layout.inbox_offset(2), sizeof(LaneHeader) + 3 * 64);
  EXPECT_EQ(layout.credit_offset(0), 2 * sizeof(LaneHeader) + 3 * 64 + 4 * 192);
  EXPECT_EQ(layout.region_bytes(0), layout.credit_offset(0) + sizeof(CreditLine));
  EXPECT_EQ(layout.region_bytes(1), sizeof(LaneHeader) + 2 * 64 + sizeof(CreditLine));
  EXPECT_EQ(layout.slot_offset(2, 1), layout.inbox_offset(2) + sizeof(LaneHeader));
  EXPECT_EQ(layout.slot_offset(2, 6), layout.inbox_offset(2) + sizeof(LaneHeader) + 192);
}

TEST(RingLayout, BadLanesAreNamedErrors) {
  auto make = [](std::vector<LaneSpec> lanes) {
    return ring_error_of([&] { RingLayout(lanes, RingMode::safe, 3, 1); });
  };
  EXPECT_EQ(make({{0, 1, 0, 8}}),
            "invalid argument: rank 1: ring: lane 0 -> 1 (depth 0, capacity 8 B): depth 0 (a "
            "lane needs at least one slot); no ring was created");
  EXPECT_NE(make({{0, 3, 4, 8}}).find("lane 0 -> 3 (depth 4, capacity 8 B): a rank outside [0, 3)"),
            std::string::npos);
  EXPECT_NE(make({{2, 2, 4, 8}}).find("a lane needs two different ranks"), std::string::npos);
  EXPECT_NE(make({{0, 1, 4, 8}, {0, 1, 2, 8}}).find("two lanes from 0 to 1"), std::string::npos);
  EXPECT_NE(make({{0, 1, kMaxDepth + 1, 8}}).find("depth above"), std::string::npos);
  EXPECT_NE(make({{0, 1, 4, kMaxCapacity + 1}}).find("capacity above"), std::string::npos);
}

TEST(RingLayout, DifferentListsAreNamed) {
  RingLayout mine({{0, 1, 4, 64}, {1, 0, 4, 64}}, RingMode::safe, 2, 0);
  RingLayout theirs({{0, 1, 8, 64}, {1, 0, 4, 64}}, RingMode::safe, 2, 1);
  RingLayout raw({{0, 1, 4, 64}, {1, 0, 4, 64}}, RingMode::raw, 2, 1);
  RingLayout fewer({{0, 1, 4, 64}}, RingMode::safe, 2, 1);
  EXPECT_NO_THROW(mine.check_same(mine.encode(), 0, 0));
  EXPECT_EQ(ring_error_of([&] { mine.check_same(theirs.encode(), 1, 0); }),
            "mismatch: rank 0: ring: rank 1's lane list differs from rank 0's: lane 0 -> 1 "
            "(depth 8, capacity 64 B) there, 0 -> 1 (depth 4, capacity 64 B) here; every rank "
            "must pass the same lanes and mode, no ring was created");
  EXPECT_NE(
      ring_error_of([&] { mine.check_same(raw.encode(), 1, 0); }).find("mode raw there, safe here"),
      std::string::npos);
  EXPECT_NE(ring_error_of([&] {
              mine.check_same(fewer.encode(), 1, 0);
            }).find("lane 1 -> 0 (depth 4, capacity 64 B) missing there"),
            std::string::npos);
}

TEST(Crc32c, KnownValuesPiecesAndCopies) {
  const char* text = "123456789";
  EXPECT_EQ(crc32c_extend(0, text, 9), 0xe3069283u);
  EXPECT_EQ(crc32c_extend(crc32c_extend(0, text, 4), text + 4, 5), 0xe3069283u);
  // Lengths around the three-stripe block (3 KiB) and odd tails; a bitwise
  // reference decides.
  auto reference = [](const std::vector<std::byte>& data) {
    uint32_t crc = 0xffffffffu;
    for (std::byte b : data) {
      crc ^= std::to_integer<uint32_t>(b);
      for (int k = 0; k < 8; ++k)
        crc = (crc & 1) ? 0x82f63b78u ^ (crc >> 1) : crc >> 1;
    }
    return ~crc;
  };
  for (size_t length : {0, 1, 7, 8, 9, 3071, 3072, 3073, 6144, 10000, 65536 + 5}) {
    const auto data = message(3, length, length);
    std::vector<std::byte> copy(length + 1, std::byte{0x5a});
    EXPECT_EQ(crc32c_extend(0, data.data(), length), reference(data)) << length;
    EXPECT_EQ(crc32c_copy(0, copy.data(), data.data(), length), reference(data)) << length;
    if (length > 0) {  // memcmp takes no null pointer, even for 0 bytes
      EXPECT_EQ(std::memcmp(copy.data(), data.data(), length), 0) << length;
    }
    EXPECT_EQ(copy[length], std::byte{0x5a}) << "copied past the end at " << length;
  }
}

// Every path this CPU has agrees with the table: lengths around the
// folding's 256-byte rounds and 64-byte blocks, unaligned source and
// destination, a running CRC carried in, and pieces that chain.
TEST(Crc32c, EveryPathAgreesWithTheTable) {
  // Not periodic, so no folding distance lines up with a repeat.
  std::vector<std::byte> data(300000);
  uint64_t state = 88172645463325252ull;
  for (std::byte& b : data) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    b = static_cast<std::byte>(state >> 24);
  }
  for (Crc32cPath path : {Crc32cPath::table, Crc32cPath::instruction, Crc32cPath::fold}) {
    if (!crc32c_supported(path)) continue;
    SCOPED_TRACE(std::string(crc32c_path_name(path)));
    for (size_t length : {0, 1, 63, 64, 255, 256, 257, 319, 320, 511, 512, 513, 4096, 4097, 8192,
                          65536 + 5, 262144, 299990}) {
      for (size_t offset : {0, 1, 7}) {
        for (uint32_t carried : {0u, 0x12345678u}) {
          const std::byte* src = data.data() + offset;
          const uint32_t want = crc32c_extend_by(Crc32cPath::table, carried, src, length);
          EXPECT_EQ(crc32c_extend_by(path, carried, src, length), want) << length << "+" << offset;
          std::vector<std::byte> copy(length + 4, std::byte{0x5a});
          EXPECT_EQ(crc32c_copy_by(path, carried, copy.data() + 3, src, length), want)
              << length << "+" << offset;
          EXPECT_TRUE(std::equal(src, src + length, copy.begin() + 3)) << length;
          EXPECT_EQ(copy[2], std::byte{0x5a});
          EXPECT_EQ(copy[length + 3], std::byte{0x5a}) << "copied past the end at " << length;
        }
      }
      // Two pieces chain into the CRC of the whole.
      const size_t half = length / 2 + 1;
      if (length > half) {
        EXPECT_EQ(crc32c_extend_by(path, crc32c_extend_by(path, 0, data.data(), half),
                                   data.data() + half, length - half),
                  crc32c_extend_by(Crc32cPath::table, 0, data.data(), length))
            << length;
      }
    }
  }
  EXPECT_TRUE(crc32c_supported(crc32c_path()));
}

// `copy` (one of crc32c.hpp's copy-and-checksum forms) of the first
// `length` bytes of `data` with `carried` carried in: returns `want`, copies
// every byte and none past the end.
template <class Copy>
void expect_copy_and_crc(Copy copy, const std::vector<std::byte>& data, size_t length,
                         uint32_t carried, uint32_t want) {
  std::vector<std::byte> to(length + 1, std::byte{0x5a});
  EXPECT_EQ(copy(carried, to.data(), data.data(), length), want) << length;
  EXPECT_TRUE(std::equal(data.begin(), data.begin() + static_cast<ptrdiff_t>(length), to.begin()))
      << length;
  EXPECT_EQ(to[length], std::byte{0x5a}) << "copied past the end at " << length;
}

std::vector<std::byte> crc_test_bytes(size_t n) {
  std::vector<std::byte> data(n);
  for (size_t i = 0; i < n; ++i)
    data[i] = static_cast<std::byte>((i * 2654435761u) >> 13);
  return data;
}

// The two-pass copies (a ring slot's side moves in a plain copy, the
// checksum reads this core's side) give the one-pass copy's bytes and CRC,
// across their 8 KiB pieces and with a CRC carried in.
TEST(Crc32c, TwoPassCopiesMatchTheOnePassCopy) {
  const std::vector<std::byte> data = crc_test_bytes(70000);
  for (size_t length : {0, 1, 255, 4096, 8191, 8192, 8193, 16384 + 7, 65536 + 5}) {
    for (uint32_t carried : {0u, 0xdeadbeefu}) {
      const uint32_t want = crc32c_extend_by(Crc32cPath::table, carried, data.data(), length);
      expect_copy_and_crc(crc32c_then_copy, data, length, carried, want);
      expect_copy_and_crc(copy_then_crc32c, data, length, carried, want);
    }
  }
}

// The prefix forms (a payload whose CRC covers its first bytes only): every
// byte copied, none past the end, and the CRC of exactly the first
// `checked` bytes, with a CRC carried in; `checked` above the length
// checks the whole.
TEST(Crc32c, PrefixCopiesChecksumTheirFirstBytesAndCopyAll) {
  const std::vector<std::byte> data = crc_test_bytes(40000);
  const std::pair<size_t, size_t> cases[] = {{4096, 2048},  {6144, 2048}, {8192 + 3, 2048},
                                             {16384, 4096}, {30000, 1},   {100, 200}};
  for (const auto& [length, checked] : cases) {
    for (uint32_t carried : {0u, 0x1234567u}) {
      const uint32_t want =
          crc32c_extend_by(Crc32cPath::table, carried, data.data(), std::min(length, checked));
      const size_t c = checked;
      expect_copy_and_crc([c](uint32_t crc, void* to, const void* from,
                              size_t n) { return crc32c_prefix_then_copy(crc, to, from, n, c); },
                          data, length, carried, want);
      expect_copy_and_crc([c](uint32_t crc, void* to, const void* from,
                              size_t n) { return copy_then_crc32c_prefix(crc, to, from, n, c); },
                          data, length, carried, want);
    }
  }
}

// Both sides of a slot copy, in every ring_slot_copy mode, over a message
// split into chunks as the writer and a partial reader split it: exact
// bytes inside each range and none outside, and the CRC both sides carry
// is that of exactly the message's first `covered` bytes (0 unchecked).
TEST(SlotCopy, BothSidesCopyEveryByteAndChecksumTheCoveredPrefix) {
  const std::vector<std::byte> message = crc_test_bytes(50000);
  struct Case {
    size_t length, chunk, covered;
  };
  const Case cases[] = {{4096, 4096, 4096},   {4096, 4096, 2048},    {6000, 6000, 2048},
                        {40000, 16384, 2048}, {40000, 16384, 20000}, {40000, 8192, 40000},
                        {300, 100, 64}};
  for (SlotCopy mode : {SlotCopy::two_pass, SlotCopy::one_pass, SlotCopy::unchecked}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(::testing::Message()
                   << "mode " << static_cast<int>(mode) << " length " << c.length << " chunk "
                   << c.chunk << " covered " << c.covered);
      std::vector<std::byte> slot(c.length + 8, std::byte{0x11});
      std::vector<std::byte> out(c.length + 8, std::byte{0x22});
      uint32_t written = 0x55aa55aau, read = 0x55aa55aau;
      for (size_t at = 0; at < c.length; at += c.chunk) {
        const size_t n = std::min(c.chunk, c.length - at);
        written = copy_into_slot(mode, written, slot.data(), message.data(), at, n, c.covered);
        read = copy_from_slot(mode, read, out.data(), slot.data(), at, n, c.covered);
      }
      const uint32_t want =
          mode == SlotCopy::unchecked
              ? 0
              : crc32c_extend_by(Crc32cPath::table, 0x55aa55aau, message.data(), c.covered);
      EXPECT_EQ(written, want);
      EXPECT_EQ(read, want);
      const auto end = message.begin() + static_cast<ptrdiff_t>(c.length);
      EXPECT_TRUE(std::equal(message.begin(), end, slot.begin()));
      EXPECT_TRUE(std::equal(message.begin(), end, out.begin()));
      EXPECT_EQ(slot[c.length], std::byte{0x11}) << "written past the range";
      EXPECT_EQ(out[c.length], std::byte{0x22}) << "written past the range";
    }
  }
}

class RingPaths : public ::testing::TestWithParam<bool> {};

// Safe mode: `depth` messages fit; the next finds the lane full (one wait,
// however often it is tried); every message arrives in order, exact.
TEST_P(RingPaths, SafeModeCreditsAndOrder) {
  RingRig rig(2, GetParam(), {{0, 1, 4, 300}}, RingMode::safe);
  RingEndpoint& w = *rig.ends[0];
  RingEndpoint& r = *rig.ends[1];
  uint64_t sent = 0;
  for (; sent < 4; ++sent)
    ASSERT_TRUE(w.try_send(1, message(0, sent + 1, 10 * sent)));
  EXPECT_FALSE(w.try_send(1, message(0, 5, 40)));
  rig.settle();
  EXPECT_FALSE(w.try_send(1, message(0, 5, 40)));
  EXPECT_EQ(rig.counters(0, 0, 1).waits, 1u);
  std::vector<std::byte> out(300);
  for (uint64_t s = 1; s <= 12; ++s) {
    const size_t n = rig.recv(1, 0, out);
    ASSERT_EQ(n, 10 * (s - 1)) << "message " << s;
    EXPECT_EQ(std::vector<std::byte>(out.begin(), out.begin() + static_cast<ptrdiff_t>(n)),
              message(0, s, n));
    if (sent < 12) {
      rig.world.run_until([&] { return w.try_send(1, message(0, sent + 1, 10 * sent)); }, 1000,
                          "credit");
      ++sent;
    }
  }
  EXPECT_FALSE(r.try_recv(0, out).has_value());
  const LaneCounters writer = rig.counters(0, 0, 1), reader = rig.counters(1, 0, 1);
  EXPECT_EQ(writer.sent, 12u);
  EXPECT_EQ(reader.delivered, 12u);
  EXPECT_EQ(reader.lost, 0u);
  EXPECT_EQ(reader.corrupt, 0u);
  EXPECT_EQ(reader.max_lag, 1u);
  EXPECT_EQ(reader.sent, 0u);
  EXPECT_EQ(writer.delivered, 0u);
}

// Raw mode: the writer never waits; ten messages through four slots leave
// 7..10, so the reader loses 6 and delivers the rest in order.
TEST_P(RingPaths, RawModeOverwritesAndCountsLoss) {
  RingRig rig(2, GetParam(), {{0, 1, 4, 64}}, RingMode::raw);
  for (uint64_t s = 1; s <= 10; ++s)
    ASSERT_TRUE(rig.ends[0]->try_send(1, message(0, s, 64)));
  rig.settle();
  std::vector<std::byte> out(64);
  for (uint64_t s = 7; s <= 10; ++s) {
    ASSERT_EQ(rig.recv(1, 0, out), 64u);
    EXPECT_EQ(out, message(0, s, 64)) << "message " << s;
  }
  EXPECT_FALSE(rig.ends[1]->try_recv(0, out).has_value());
  const LaneCounters reader = rig.counters(1, 0, 1);
  EXPECT_EQ(reader.delivered, 4u);
  EXPECT_EQ(reader.lost, 6u);
  EXPECT_EQ(reader.max_lag, 7u);
  EXPECT_EQ(reader.delivered + reader.lost, rig.counters(0, 0, 1).sent);
  EXPECT_EQ(rig.counters(0, 0, 1).waits, 0u);
}

// Every pair of three ranks, messages of every length up to the capacity,
// received through recv_any.
TEST_P(RingPaths, AllPairsRecvAny) {
  std::vector<LaneSpec> lanes;
  for (int s = 0; s < 3; ++s)
    for (int d = 0; d < 3; ++d)
      if (s != d) lanes.push_back({s, d, 3, 40});
  RingRig rig(3, GetParam(), lanes, RingMode::safe);
  std::vector<std::vector<uint64_t>> next(3, std::vector<uint64_t>(3, 1));
  std::vector<std::vector<uint64_t>> seen(3, std::vector<uint64_t>(3, 1));
  std::vector<std::byte> out(40);
  size_t received = 0;
  const size_t total = 6 * 41;
  // The senders and readers make progress themselves (through a mapping
  // nothing is in flight in the transport), so this is a bounded loop
  // rather than run_until, whose stall check expects the transport to move.
  auto round = [&] {
    for (int s = 0; s < 3; ++s) {
      for (int d = 0; d < 3; ++d) {
        uint64_t& k = next[static_cast<size_t>(s)][static_cast<size_t>(d)];
        if (s == d || k > 41) continue;
        if (rig.ends[static_cast<size_t>(s)]->try_send(d, message(s, k, k - 1))) ++k;
      }
    }
    for (int d = 0; d < 3; ++d) {
      while (auto got = rig.ends[static_cast<size_t>(d)]->try_recv_any(out)) {
        uint64_t& k = seen[static_cast<size_t>(got->src)][static_cast<size_t>(d)];
        EXPECT_EQ(got->bytes, k - 1);
        EXPECT_TRUE(std::equal(out.begin(), out.begin() + static_cast<ptrdiff_t>(got->bytes),
                               message(got->src, k, k - 1).begin()))
            << got->src << " -> " << d << " message " << k;
        ++k;
        ++received;
      }
    }
    return received == total;
  };
  for (int k = 0; k < 100000 && !round(); ++k)
    rig.world.progress_all();
  ASSERT_EQ(received, total);
  for (int d = 0; d < 3; ++d) {
    for (const LaneCounters& c : rig.ends[static_cast<size_t>(d)]->counters()) {
      if (c.dst == d) {
        EXPECT_EQ(c.delivered, 41u);
      }
    }
  }
}

TEST_P(RingPaths, TooLongMessagesAndShortBuffers) {
  RingRig rig(2, GetParam(), {{0, 1, 2, 16}}, RingMode::safe);
  EXPECT_EQ(ring_error_of([&] { rig.ends[0]->try_send(1, message(0, 1, 17)); }),
            "invalid argument: rank 0: ring lane 0 -> 1 (safe, depth 2, capacity 16 B): a message "
            "of 17 B exceeds the lane's slot capacity of 16 B; nothing was sent");
  EXPECT_EQ(rig.counters(0, 0, 1).sent, 0u);
  ASSERT_TRUE(rig.ends[0]->try_send(1, message(0, 1, 16)));
  rig.settle();
  std::vector<std::byte> small(15), big(16);
  EXPECT_EQ(ring_error_of([&] { rig.ends[1]->try_recv(0, small); }),
            "truncated: rank 1: ring lane 0 -> 1 (safe, depth 2, capacity 16 B): message 1 has "
            "16 B, the receive buffer 15 B; nothing was consumed");
  EXPECT_EQ(rig.recv(1, 0, big), 16u);
  EXPECT_EQ(big, message(0, 1, 16));
  // Lanes that do not exist.
  EXPECT_NE(ring_error_of([&] {
              rig.ends[1]->try_send(0, message(1, 1, 1));
            }).find("no lane 1 -> 0 (this rank writes to: none)"),
            std::string::npos);
  EXPECT_NE(ring_error_of([&] {
              rig.ends[0]->try_recv(1, big);
            }).find("no lane 1 -> 0 (this rank reads from: none)"),
            std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(MappedAndPut, RingPaths, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "mapped" : "put"; });

// The reader's slot, to corrupt it: payload byte, guard, seq.
std::byte* slot_of(RingEndpoint& reader, int lane, uint64_t seq) {
  return reader.local_memory() + reader.layout().slot_offset(lane, seq);
}

TEST(RingChecks, CorruptPayloadAndGuardAreCountedAndRetried) {
  for (RingMode mode : {RingMode::safe, RingMode::raw}) {
    RingRig rig(2, true, {{0, 1, 4, 64}}, mode);
    RingEndpoint& r = *rig.ends[1];
    ASSERT_TRUE(rig.ends[0]->try_send(1, message(0, 1, 50)));
    ASSERT_TRUE(rig.ends[0]->try_send(1, message(0, 2, 50)));
    std::vector<std::byte> out(64);
    // A flipped payload byte fails the CRC: counted once, however often read.
    std::byte* payload = slot_of(r, 0, 1) + kSlotHeader + 20;
    *payload ^= std::byte{0x10};
    EXPECT_FALSE(r.try_recv(0, out).has_value());
    EXPECT_FALSE(r.try_recv(0, out).has_value());
    EXPECT_EQ(rig.counters(1, 0, 1).corrupt, 1u);
    *payload ^= std::byte{0x10};
    ASSERT_EQ(r.try_recv(0, out), 50u);
    EXPECT_TRUE(std::equal(out.begin(), out.begin() + 50, message(0, 1, 50).begin()));
    // A broken guard.
    std::byte* guard = slot_of(r, 0, 2) + kSlotHeader + 56;
    *guard ^= std::byte{0x01};
    EXPECT_FALSE(r.try_recv(0, out).has_value());
    EXPECT_EQ(rig.counters(1, 0, 1).corrupt, 2u);
    *guard ^= std::byte{0x01};
    ASSERT_EQ(r.try_recv(0, out), 50u);
    // A length beyond the capacity.
    ASSERT_TRUE(rig.ends[0]->try_send(1, message(0, 3, 8)));
    uint64_t bad_length = 65;
    std::memcpy(slot_of(r, 0, 3) + 8, &bad_length, 8);
    EXPECT_FALSE(r.try_recv(0, out).has_value());
    EXPECT_EQ(rig.counters(1, 0, 1).corrupt, 3u);
    const LaneCounters c = rig.counters(1, 0, 1);
    EXPECT_EQ(c.delivered, 2u);
    EXPECT_EQ(c.lost, 0u);
  }
}

// A safe slot that holds a later message than expected: the writer lapped
// the reader. A named error, and the ring stays broken.
TEST(RingChecks, LappedSlotIsAnError) {
  RingRig rig(2, true, {{0, 1, 4, 64}}, RingMode::safe);
  RingEndpoint& r = *rig.ends[1];
  ASSERT_TRUE(rig.ends[0]->try_send(1, message(0, 1, 8)));
  auto* header = reinterpret_cast<SlotHeader*>(slot_of(r, 0, 1));
  header->seq.store(5);  // message 5 in message 1's slot
  std::vector<std::byte> out(64);
  const std::string expected =
      "protocol error: rank 1: ring lane 0 -> 1 (safe, depth 4, capacity 64 B): slot 0 holds "
      "message 5 "
      "while message 1 is expected: the writer lapped the reader (a safe lane's credits were not "
      "respected)";
  EXPECT_EQ(ring_error_of([&] { r.try_recv(0, out); }), expected);
  EXPECT_EQ(ring_error_of([&] { r.try_recv(0, out); }), expected);
}

// Safe mode, a long message: the reader copies the chunks the writer has
// published before the message is complete, and the finished message is
// exact. The writer's chunks are written by hand here.
TEST(RingChecks, MessageReadWhileWritten) {
  RingRig rig(2, true, {{0, 1, 2, 1024}}, RingMode::safe);
  RingEndpoint& r = *rig.ends[1];
  const int lane = r.layout().find(0, 1);
  std::byte* slot = slot_of(r, lane, 1);
  auto* header = reinterpret_cast<SlotHeader*>(slot);
  auto* lane_header =
      reinterpret_cast<LaneHeader*>(r.local_memory() + r.layout().inbox_offset(lane));
  const auto body = message(0, 1, 1000);
  header->len = 1000;
  std::memcpy(slot + kSlotHeader, body.data(), 400);
  lane_header->progress.store((uint64_t{1} << 32) | 400);
  std::vector<std::byte> out(1024, std::byte{0});
  EXPECT_FALSE(r.try_recv(0, out).has_value());
  EXPECT_TRUE(std::equal(out.begin(), out.begin() + 400, body.begin())) << "first chunk not copied";
  EXPECT_EQ(out[400], std::byte{0});
  std::memcpy(slot + kSlotHeader + 400, body.data() + 400, 600);
  header->crc = crc32c_extend(0, body.data(), 1000);
  const uint64_t guard = ~uint64_t{1};
  std::memcpy(slot + kSlotHeader + 1000, &guard, 8);
  header->seq.store(1);
  ASSERT_EQ(r.try_recv(0, out), 1000u);
  EXPECT_TRUE(std::equal(out.begin(), out.begin() + 1000, body.begin()));
  EXPECT_EQ(rig.counters(1, 0, 1).corrupt, 0u);
}

// A long message through the real writer, chunked (ring_chunk_bytes), on
// both paths and in both modes: exact bytes.
TEST(RingChecks, ChunkedWritesArriveExact) {
  params::ScopedSet chunk("ring_chunk_bytes", "256");
  for (bool mapped : {true, false}) {
    for (RingMode mode : {RingMode::safe, RingMode::raw}) {
      RingRig rig(2, mapped, {{0, 1, 2, 5000}}, mode);
      std::vector<std::byte> out(5000);
      for (uint64_t s = 1; s <= 5; ++s) {
        ASSERT_TRUE(rig.ends[0]->try_send(1, message(0, s, 4000 + s)));
        ASSERT_EQ(rig.recv(1, 0, out), 4000 + s);
        EXPECT_TRUE(std::equal(out.begin(), out.begin() + 4000 + static_cast<ptrdiff_t>(s),
                               message(0, s, 4000 + s).begin()))
            << "message " << s << (mapped ? " mapped" : " put");
      }
      // Chunks only through a mapping in safe mode; raw mode and puts
      // write whole images.
      EXPECT_EQ(rig.counters(0, 0, 1).chunked, mapped && mode == RingMode::safe ? 5u : 0u);
      EXPECT_EQ(rig.counters(0, 0, 1).by_descriptor, 0u);
    }
  }
}

// A reader that sleeps (wait_policy=block) in recv, on its own thread, is
// woken by the writer's publication and gets the message; it announced one
// sleep (stats' sleeps), which did not run out its limit, the writer none.
// The writer publishes only once the reader's sleeping word is up, so the
// wake-up is the writer's to send: through the mapping on the word's futex,
// through puts by a wake-up message to the transport's fd.
TEST(RingWait, ASleepingReaderIsWokenByTheWriter) {
  params::ScopedSet policy("wait_policy", "block");
  params::ScopedSet slice("wait_block_slice_us", "10000000");  // no waking by the clock
  params::ScopedSet futex_slice("shm_wake_interval_us", "1000000");
  for (bool mapped : {true, false}) {
    SCOPED_TRACE(mapped ? "mapped" : "put/get");
    RingRig rig(2, mapped, {{0, 1, 2, 4096}}, RingMode::safe);
    RingEndpoint& reader = *rig.ends[1];
    const auto* lane_header = reinterpret_cast<const LaneHeader*>(
        reader.local_memory() + reader.layout().inbox_offset(reader.layout().find(0, 1)));
    std::vector<std::byte> out(4096);
    size_t got = 0;
    std::thread receiver([&] { got = reader.recv(0, out); });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (lane_header->reader_sleeping.load() == 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::yield();
    EXPECT_EQ(lane_header->reader_sleeping.load(), mapped ? kSleepOnFutex : kSleepOnTransport)
        << "the reader never went to sleep";
    rig.ends[0]->send(1, message(0, 1, 3000));
    receiver.join();
    ASSERT_EQ(got, 3000u);
    EXPECT_TRUE(std::equal(out.begin(), out.begin() + 3000, message(0, 1, 3000).begin()));
    EXPECT_EQ(rig.counters(1, 0, 1).sleeps, 1u);
    EXPECT_EQ(rig.counters(1, 0, 1).sleeps_timed_out, 0u);
    EXPECT_EQ(rig.counters(0, 0, 1).sleeps, 0u);
    EXPECT_EQ(lane_header->reader_sleeping.load(), kAwake) << "left set after the wait";
  }
}

TEST(RingCreation, DisagreeingRanksAreNamedEverywhere) {
  MemoryWorld world(3);
  WorldGroups groups(world);
  std::vector<std::string> errors;
  EXPECT_THROW(groups.construct_all<RingEndpoint>(
                   [&](int r) {
                     std::vector<LaneSpec> lanes{{0, 1, 4, 64}, {1, 2, 4, 64}};
                     if (r == 2) lanes[1].depth = 8;
                     return std::make_unique<RingEndpoint>(groups.group(r), lanes, RingMode::safe);
                   },
                   &errors),
               Error);
  ASSERT_EQ(errors.size(), 3u);
  for (const std::string& e : errors) {
    EXPECT_NE(e.find("lane list differs"), std::string::npos) << e;
    EXPECT_NE(e.find("1 -> 2 (depth"), std::string::npos) << e;
  }
}

TEST(RingCreation, ZeroDepthIsRefusedBeforeAnyExchange) {
  MemoryWorld world(2);
  WorldGroups groups(world);
  std::vector<std::string> errors;
  EXPECT_THROW(groups.construct_all<RingEndpoint>(
                   [&](int r) {
                     return std::make_unique<RingEndpoint>(
                         groups.group(r), std::vector<LaneSpec>{{0, 1, 0, 64}}, RingMode::raw);
                   },
                   &errors),
               Error);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_NE(errors[0].find("depth 0 (a lane needs at least one slot)"), std::string::npos);
  EXPECT_EQ(world.stats(0).rma_ops + world.stats(1).rma_ops, 0u);
}

}  // namespace
}  // namespace grove::rma
