// Single-copy offers (rma/ring_single_copy.cpp) in one process: two ranks
// of a MemoryWorld with mapped lanes, the reader reading this process's own
// memory with process_vm_readv. A taken offer arrives exact and counts once;
// one nobody takes goes into its slot after ring_single_copy_wait_us; a
// damaged offer is corrupt and the message comes by its slot; a short buffer
// consumes nothing; the payload CRC when asked; a reader that cannot verify
// the writer refuses, and the lane offers nothing more; raw mode and
// try_send never offer.

#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <cstring>
#include <thread>

#include "core/params.hpp"
#include "rma/crc32c.hpp"
#include "rma/ring_endpoint.hpp"
#include "support/memory_world.hpp"
#include "support/world_group.hpp"

namespace grove::rma {
namespace {

using grove::testing::WorldGroups;

constexpr size_t kOfferCapacity = 64 * 1024;
constexpr size_t kOfferLength = 40000;  // above the threshold and ring_chunk_bytes

std::vector<std::byte> offer_payload(uint64_t seq, size_t length) {
  std::vector<std::byte> m(length);
  for (size_t i = 0; i < length; ++i)
    m[i] = static_cast<std::byte>((seq * 29 + i * 13 + (i >> 8)) & 0xff);
  return m;
}

std::string offer_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return std::string(errc_name(e.code())) + ": " + e.what();
  }
  return "no error";
}

// The offer's checksum as the writer computes it: seq, then the body up to
// its crc field.
uint32_t body_crc(uint64_t seq, const OfferBody& body) {
  return crc32c_extend(crc32c_extend(0, &seq, 8), &body, offsetof(OfferBody, crc));
}

struct OfferRig {
  params::ScopedSet threshold{"ring_single_copy_bytes", "1024"};
  MemoryWorld world;
  WorldGroups groups;
  std::vector<std::unique_ptr<RingEndpoint>> ends;
  std::thread sender;
  std::string send_error;

  explicit OfferRig(RingMode mode = RingMode::safe)
      : world(2, MemoryWorld::Options{0, MemoryWorld::SendMode::eager, true, true}), groups(world) {
    const std::vector<LaneSpec> lanes{{0, 1, 4, kOfferCapacity}};
    ends = groups.construct_all<RingEndpoint>(
        [&](int r) { return std::make_unique<RingEndpoint>(groups.group(r), lanes, mode); });
  }
  ~OfferRig() {
    if (sender.joinable()) sender.join();
  }
  RingEndpoint& writer() { return *ends[0]; }
  RingEndpoint& reader() { return *ends[1]; }
  LaneCounters counters(int rank) {
    for (const LaneCounters& c : ends[static_cast<size_t>(rank)]->counters()) {
      if (c.src == 0 && c.dst == 1) return c;
    }
    ADD_FAILURE() << "no lane 0 -> 1 on rank " << rank;
    return {};
  }
  LaneHeader& header() {
    return *reinterpret_cast<LaneHeader*>(reader().local_memory() +
                                          reader().layout().inbox_offset(0));
  }
  // send() on a thread of its own (it waits for the reader).
  void send_async(std::vector<std::byte> m) {
    sender = std::thread([this, m = std::move(m)] {
      try {
        writer().send(1, m);
      } catch (const Error& e) {
        send_error = e.what();
      }
    });
  }
  void join() {
    sender.join();
    EXPECT_EQ(send_error, "");
  }
  // Until the offer word reads `value` (30 s at most).
  bool offer_reads(uint64_t value) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (header().offer.load() != value) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::yield();
    }
    return true;
  }
  // try_recv until a message comes (30 s at most).
  size_t recv(std::span<std::byte> out) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    for (;;) {
      if (const auto got = reader().try_recv(0, out)) return *got;
      if (std::chrono::steady_clock::now() > deadline) {
        ADD_FAILURE() << "nothing arrived";
        return 0;
      }
      std::this_thread::yield();
    }
  }
};

TEST(RingSingleCopy, TakenOffersArriveExactAndCountOnce) {
  params::ScopedSet wait("ring_single_copy_wait_us", "60000000");  // never taken back
  OfferRig rig;
  const std::vector<size_t> sizes{1025, 4096, kOfferLength, kOfferCapacity, 1024};
  std::vector<std::vector<std::byte>> got(sizes.size());
  std::string recv_error;
  std::thread receiver([&] {
    std::vector<std::byte> out(kOfferCapacity);
    try {
      for (auto& g : got) {
        const size_t n = rig.reader().recv(0, out);
        g.assign(out.begin(), out.begin() + static_cast<ptrdiff_t>(n));
      }
    } catch (const Error& e) {
      recv_error = e.what();
    }
  });
  for (size_t i = 0; i < sizes.size(); ++i)
    rig.writer().send(1, offer_payload(i + 1, sizes[i]));
  receiver.join();
  EXPECT_EQ(recv_error, "");
  for (size_t i = 0; i < sizes.size(); ++i)
    EXPECT_EQ(got[i], offer_payload(i + 1, sizes[i])) << "message " << i + 1;
  const LaneCounters w = rig.counters(0);
  EXPECT_EQ(w.sent, 5u);
  EXPECT_EQ(w.single_copy, 4u);  // 1024 B is not above the threshold: its slot
  EXPECT_EQ(w.chunked, 0u);
  const LaneCounters r = rig.counters(1);
  EXPECT_EQ(r.delivered, 5u);
  EXPECT_EQ(r.corrupt, 0u);
  EXPECT_EQ(rig.header().offer.load(), 4u | kOfferTaken);
}

TEST(RingSingleCopy, AnOfferNobodyTakesGoesIntoItsSlot) {
  params::ScopedSet wait("ring_single_copy_wait_us", "1000");
  OfferRig rig;
  const auto m = offer_payload(1, kOfferLength);
  rig.writer().send(1, m);  // nobody receives: taken back after 1 ms
  EXPECT_EQ(rig.header().offer.load(), 0u);
  std::vector<std::byte> out(kOfferCapacity);
  ASSERT_EQ(rig.recv(out), kOfferLength);
  EXPECT_TRUE(std::equal(m.begin(), m.end(), out.begin()));
  const LaneCounters w = rig.counters(0);
  EXPECT_EQ(w.sent, 1u);
  EXPECT_EQ(w.single_copy, 0u);
  EXPECT_EQ(w.chunked, 1u);
  EXPECT_EQ(rig.counters(1).delivered, 1u);
}

// The body changed under a valid offer word: its CRC fails, counted once,
// declined; the writer writes the slot and the message arrives from there.
TEST(RingSingleCopy, ADamagedOfferIsCorruptAndTheSlotFollows) {
  params::ScopedSet wait("ring_single_copy_wait_us", "60000000");
  OfferRig rig;
  const auto m = offer_payload(1, kOfferLength);
  rig.send_async(m);
  ASSERT_TRUE(rig.offer_reads(1));
  rig.header().offer_body.len -= 1;
  std::vector<std::byte> out(kOfferCapacity);
  ASSERT_EQ(rig.recv(out), kOfferLength);
  rig.join();
  EXPECT_TRUE(std::equal(m.begin(), m.end(), out.begin()));
  EXPECT_EQ(rig.header().offer.load(), 1u | kOfferDeclined);
  const LaneCounters r = rig.counters(1);
  EXPECT_EQ(r.corrupt, 1u);
  EXPECT_EQ(r.delivered, 1u);
  const LaneCounters w = rig.counters(0);
  EXPECT_EQ(w.single_copy, 0u);
  EXPECT_EQ(w.chunked, 1u);
}

TEST(RingSingleCopy, AShortBufferConsumesNothing) {
  params::ScopedSet wait("ring_single_copy_wait_us", "60000000");
  OfferRig rig;
  const auto m = offer_payload(1, kOfferLength);
  rig.send_async(m);
  ASSERT_TRUE(rig.offer_reads(1));
  std::vector<std::byte> small(1000), out(kOfferCapacity);
  EXPECT_EQ(offer_error_of([&] { rig.reader().try_recv(0, small); }),
            "truncated: rank 1: ring lane 0 -> 1 (safe, depth 4, capacity 65536 B): message 1 "
            "has 40000 B, the receive buffer 1000 B; nothing was consumed");
  EXPECT_EQ(rig.header().offer.load(), 1u) << "the offer was not given back";
  ASSERT_EQ(rig.recv(out), kOfferLength);
  rig.join();
  EXPECT_TRUE(std::equal(m.begin(), m.end(), out.begin()));
  EXPECT_EQ(rig.counters(0).single_copy, 1u);
  EXPECT_EQ(rig.counters(1).corrupt, 0u);
}

// ring_single_copy_crc: the offer carries the payload's CRC; a payload that
// does not match it (here: a CRC changed, the offer's own CRC made right) is
// corrupt and declined, and the slot's checks take over.
TEST(RingSingleCopy, ThePayloadCrcWhenAsked) {
  params::ScopedSet wait("ring_single_copy_wait_us", "60000000");
  params::ScopedSet crc("ring_single_copy_crc", "true");
  OfferRig rig;
  const auto m = offer_payload(1, kOfferLength);
  rig.send_async(m);
  ASSERT_TRUE(rig.offer_reads(1));
  OfferBody& body = rig.header().offer_body;
  EXPECT_EQ(body.flags, kOfferPayloadCrc);
  EXPECT_EQ(body.payload_crc, crc32c_extend(0, m.data(), m.size()));
  body.payload_crc ^= 1;
  body.crc = body_crc(1, body);
  std::vector<std::byte> out(kOfferCapacity);
  ASSERT_EQ(rig.recv(out), kOfferLength);
  rig.join();
  EXPECT_TRUE(std::equal(m.begin(), m.end(), out.begin()));
  EXPECT_EQ(rig.counters(1).corrupt, 1u);
  EXPECT_EQ(rig.counters(0).single_copy, 0u);
  EXPECT_EQ(rig.counters(0).chunked, 1u);
  // The next one is taken, checked and delivered.
  const auto m2 = offer_payload(2, kOfferLength);
  rig.send_async(m2);
  ASSERT_TRUE(rig.offer_reads(2));
  ASSERT_EQ(rig.recv(out), kOfferLength);
  rig.join();
  EXPECT_TRUE(std::equal(m2.begin(), m2.end(), out.begin()));
  EXPECT_EQ(rig.counters(0).single_copy, 1u);
  EXPECT_EQ(rig.counters(1).corrupt, 1u);
}

// A token word that does not read right (as if the pid named a process of
// another namespace): refused, not corrupt; the writer writes the slot and
// offers nothing more on the lane.
TEST(RingSingleCopy, AnUnverifiedWriterIsRefusedOnce) {
  params::ScopedSet wait("ring_single_copy_wait_us", "60000000");
  OfferRig rig;
  const auto m = offer_payload(1, kOfferLength);
  rig.send_async(m);
  ASSERT_TRUE(rig.offer_reads(1));
  OfferBody& body = rig.header().offer_body;
  body.token ^= 1;
  body.crc = body_crc(1, body);
  std::vector<std::byte> out(kOfferCapacity);
  ASSERT_EQ(rig.recv(out), kOfferLength);
  rig.join();
  EXPECT_TRUE(std::equal(m.begin(), m.end(), out.begin()));
  EXPECT_EQ(rig.header().offer.load(), 1u | kOfferRefused);
  EXPECT_EQ(rig.counters(1).corrupt, 0u);
  // Nobody receives now, and the wait is a minute: a send that offered
  // would hang here.
  rig.writer().send(1, offer_payload(2, kOfferLength));
  EXPECT_EQ(rig.header().offer.load(), 1u | kOfferRefused);
  ASSERT_EQ(rig.recv(out), kOfferLength);
  EXPECT_EQ(rig.counters(0).single_copy, 0u);
  EXPECT_EQ(rig.counters(0).chunked, 2u);
}

TEST(RingSingleCopy, RawModeAndTrySendNeverOffer) {
  params::ScopedSet wait("ring_single_copy_wait_us", "60000000");
  for (RingMode mode : {RingMode::raw, RingMode::safe}) {
    OfferRig rig(mode);
    const auto m = offer_payload(1, kOfferLength);
    if (mode == RingMode::raw) {
      rig.writer().send(1, m);
    } else {
      ASSERT_TRUE(rig.writer().try_send(1, m));
    }
    EXPECT_EQ(rig.header().offer.load(), 0u);
    std::vector<std::byte> out(kOfferCapacity);
    ASSERT_EQ(rig.recv(out), kOfferLength);
    EXPECT_TRUE(std::equal(m.begin(), m.end(), out.begin()));
    EXPECT_EQ(rig.counters(0).single_copy, 0u);
  }
}

// ring_slot_copy's other two ways (the writer's and the reader's copies,
// chunked and whole): exact bytes; one_pass still catches a flipped payload
// byte, unchecked (the diagnostic) only the guard.
TEST(RingSlotCopy, OnePassAndUncheckedArriveExact) {
  params::ScopedSet chunk("ring_chunk_bytes", "4096");
  for (const char* way : {"one_pass", "unchecked"}) {
    SCOPED_TRACE(way);
    params::ScopedSet copy("ring_slot_copy", way);
    OfferRig rig;
    std::vector<std::byte> out(kOfferCapacity);
    for (uint64_t s = 1; s <= 3; ++s) {
      const auto m = offer_payload(s, s == 2 ? 300 : kOfferLength + s);
      ASSERT_TRUE(rig.writer().try_send(1, m));
      ASSERT_EQ(rig.recv(out), m.size());
      EXPECT_TRUE(std::equal(m.begin(), m.end(), out.begin())) << "message " << s;
    }
    ASSERT_TRUE(rig.writer().try_send(1, offer_payload(4, 300)));
    std::byte* payload =
        rig.reader().local_memory() + rig.reader().layout().slot_offset(0, 4) + kSlotHeader + 100;
    *payload ^= std::byte{0x20};
    const bool checked = std::string(way) == "one_pass";
    EXPECT_EQ(rig.reader().try_recv(0, out).has_value(), !checked);
    EXPECT_EQ(rig.counters(1).corrupt, checked ? 1u : 0u);
    EXPECT_EQ(rig.counters(0).chunked, 2u);
  }
}

// ring_crc_bytes: a payload longer than it carries the CRC of its first
// ring_crc_bytes only (kind kSlotInlinePrefix says how much). A flipped
// byte inside the covered part is corrupt; one beyond it is not seen (the
// narrowing, docs/rma.md "Large messages"); with ring_crc_bytes=0 it is; a
// kind that claims a coverage the length does not allow is corrupt.
TEST(RingCrcBytes, ALongPayloadIsCheckedOverItsFirstBytes) {
  params::ScopedSet chunk("ring_chunk_bytes", "4096");
  for (const char* limit : {"4096", "0"}) {
    SCOPED_TRACE(limit);
    params::ScopedSet crc_bytes("ring_crc_bytes", limit);
    const bool narrowed = std::string(limit) != "0";
    OfferRig rig;
    RingEndpoint& r = rig.reader();
    std::vector<std::byte> out(kOfferCapacity);
    auto slot = [&](uint64_t seq) { return r.local_memory() + r.layout().slot_offset(0, seq); };
    const auto m1 = offer_payload(1, 10000);
    ASSERT_TRUE(rig.writer().try_send(1, m1));
    const auto* h = reinterpret_cast<const SlotHeader*>(slot(1));
    EXPECT_EQ(h->kind, narrowed ? prefix_kind(4096) : kSlotInline);
    EXPECT_EQ(h->crc, crc32c_extend(0, m1.data(), narrowed ? 4096 : 10000));
    ASSERT_EQ(rig.recv(out), 10000u);
    EXPECT_TRUE(std::equal(m1.begin(), m1.end(), out.begin()));
    // A flipped byte inside the covered part.
    ASSERT_TRUE(rig.writer().try_send(1, offer_payload(2, 10000)));
    slot(2)[kSlotHeader + 4000] ^= std::byte{0x08};
    EXPECT_FALSE(r.try_recv(0, out).has_value());
    EXPECT_EQ(rig.counters(1).corrupt, 1u);
    slot(2)[kSlotHeader + 4000] ^= std::byte{0x08};
    ASSERT_EQ(rig.recv(out), 10000u);
    // One beyond it: seen only with the whole payload covered.
    ASSERT_TRUE(rig.writer().try_send(1, offer_payload(3, 10000)));
    slot(3)[kSlotHeader + 9000] ^= std::byte{0x08};
    EXPECT_EQ(r.try_recv(0, out).has_value(), narrowed);
    EXPECT_EQ(rig.counters(1).corrupt, narrowed ? 1u : 2u);
    if (!narrowed) {
      slot(3)[kSlotHeader + 9000] ^= std::byte{0x08};
      ASSERT_EQ(rig.recv(out), 10000u);
    } else {
      EXPECT_EQ(std::to_integer<int>(out[9000]),
                std::to_integer<int>(offer_payload(3, 10000)[9000] ^ std::byte{0x08}));
    }
    // A coverage the length does not allow.
    ASSERT_TRUE(rig.writer().try_send(1, offer_payload(4, 1000)));
    auto* h4 = reinterpret_cast<SlotHeader*>(slot(4));
    h4->kind = prefix_kind(1024);
    EXPECT_FALSE(r.try_recv(0, out).has_value());
    EXPECT_EQ(rig.counters(1).corrupt, narrowed ? 2u : 3u);
    EXPECT_EQ(rig.counters(1).delivered, 3u);
  }
}

}  // namespace
}  // namespace grove::rma
