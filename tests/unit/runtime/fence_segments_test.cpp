// The pipelined (segmented) release of docs/fence.md: identical bytes at
// every rank for payloads that are and are not multiples of the segment,
// the exact segment count on every edge, relays that pass segments on
// before they hold the whole payload, a relay killed between segments,
// results superseded while partial, and malformed segment frames.

#include <gtest/gtest.h>

#include <map>

#include <fmt/format.h>

#include "core/params.hpp"
#include "grove/error.hpp"
#include "runtime/release_segments.hpp"
#include "unit/runtime/fence_world.hpp"

namespace grove::testing {
namespace {

using runtime::FenceConfig;
using runtime::FenceKind;
using runtime::FenceMessage;

FenceConfig segmented(int routing, int release, uint64_t segment) {
  FenceConfig c = fence_config(routing, release);
  c.release_segment = segment;
  return c;
}

// The encoded result of `n` blobs of `blob` bytes: origin, origin_version,
// departed count, blob count, then a length and the bytes of each blob.
uint64_t payload_bytes(int n, size_t blob) {
  return 4 + 8 + 4 + 4 + static_cast<uint64_t>(n) * (8 + blob);
}

uint64_t segments_per_edge(uint64_t payload, uint64_t segment) {
  return segment == 0 || segment >= payload ? 1 : (payload + segment - 1) / segment;
}

TEST(FenceSegments, CutAndAssemble) {
  using Cuts = std::vector<std::pair<uint64_t, uint64_t>>;
  EXPECT_EQ(runtime::cut_segments(0, 64), (Cuts{{0, 0}}));
  EXPECT_EQ(runtime::cut_segments(10, 0), (Cuts{{0, 10}}));
  EXPECT_EQ(runtime::cut_segments(10, 10), (Cuts{{0, 10}}));
  EXPECT_EQ(runtime::cut_segments(10, 4), (Cuts{{0, 4}, {4, 4}, {8, 2}}));

  EXPECT_TRUE(runtime::SegmentAssembly(0).whole());
  Blob whole(10);
  for (size_t i = 0; i < whole.size(); ++i)
    whole[i] = static_cast<std::byte>(i + 1);
  const auto piece = [&](size_t from, size_t to) {
    return std::make_shared<const Blob>(whole.begin() + static_cast<long>(from),
                                        whole.begin() + static_cast<long>(to));
  };
  // Cut 4-4-2 first, then overlapping pieces of a replay cut 3-3-3-1.
  runtime::SegmentAssembly a(10);
  EXPECT_TRUE(a.add(4, piece(4, 8)));
  EXPECT_FALSE(a.add(4, piece(4, 8)));  // a duplicate: nothing new
  EXPECT_FALSE(a.add(6, piece(6, 8)));  // inside a held piece
  EXPECT_TRUE(a.add(3, piece(3, 6)));   // one new byte, at 3
  EXPECT_EQ(a.have(), 5u);
  EXPECT_TRUE(a.add(0, piece(0, 3)));
  EXPECT_FALSE(a.whole());
  EXPECT_TRUE(a.add(6, piece(6, 10)));  // 8..10 new
  ASSERT_TRUE(a.whole());
  EXPECT_EQ(*a.take(), whole);
  EXPECT_FALSE(a.add(0, piece(0, 10)));  // after take(): still whole, a duplicate
  EXPECT_EQ(a.have(), 10u);
}

// Identical, exact bytes at every rank and exactly ceil(P / segment)
// release messages on every edge: blobs of 0 bytes, payloads smaller than
// one segment, equal to it, one byte over, and not a multiple of it.
TEST(FenceSegments, EverySizeIdenticalBytesAndSegmentCountsPerEdge) {
  for (int n : {6, 16}) {
    for (int release : {2, 4}) {
      for (size_t blob : {size_t{0}, size_t{1}, size_t{100}, size_t{777}}) {
        const uint64_t p = payload_bytes(n, blob);
        for (uint64_t segment : {uint64_t{0}, uint64_t{64}, uint64_t{100}, p - 1, p, p + 1}) {
          SCOPED_TRACE(fmt::format("n={} release_radix={} blob={} payload={} segment={}", n,
                                   release, blob, p, segment));
          FenceWorld w(n, segmented(64, release, segment));
          w.set_blob_bytes(blob);
          w.start_all();
          w.start_all();
          w.drive_all();
          EXPECT_EQ(w.verify(0), "");
          EXPECT_EQ(w.verify(1), "");
          std::map<std::pair<int, int>, uint64_t> per_edge;  // generation 0
          std::map<std::pair<int, int>, uint64_t> bytes;
          for (const SentMessage& m : w.log()) {
            if (m.kind != FenceKind::release || m.generation != 0) continue;
            EXPECT_EQ(m.total, p);
            ++per_edge[{m.from, m.to}];
            bytes[{m.from, m.to}] += m.length;
          }
          EXPECT_EQ(per_edge.size(), static_cast<size_t>(n - 1));
          for (const auto& [edge, count] : per_edge) {
            EXPECT_EQ(count, segments_per_edge(p, segment)) << edge.first << "->" << edge.second;
            EXPECT_EQ(bytes[edge], p) << edge.first << "->" << edge.second;
          }
          for (int r = 0; r < n; ++r)
            EXPECT_EQ(w.engine(r).release_stats().replays, 0u) << "rank " << r;
        }
      }
    }
  }
}

// Pipelined: a relay passes its first segment on before it holds the whole
// payload; with segment 0 (store-and-forward) only after.
TEST(FenceSegments, ARelayForwardsBeforeItHoldsTheWhole) {
  for (uint64_t segment : {uint64_t{256}, uint64_t{0}}) {
    FenceWorld w(8, segmented(64, 2, segment));
    w.set_blob_bytes(300);  // a 2,484-byte release: 10 segments of 256
    std::optional<bool> held_at_first_forward;
    w.tap(1).observe([&](const SentMessage& m) {
      if (m.kind == FenceKind::release && !held_at_first_forward)
        held_at_first_forward = w.got(1, 0);
    });
    w.start_all();
    w.drive_all();
    ASSERT_EQ(w.verify(0), "");
    ASSERT_TRUE(held_at_first_forward);
    EXPECT_EQ(*held_at_first_forward, segment == 0) << "segment " << segment;
  }
}

// A release relay dies after forwarding some segments (and at every other
// message step); the orphans, holding part of the payload from it, complete
// with the whole payload replayed by their new parents. Notices go to
// everyone, or only to the root (the view then travels its relay).
TEST(FenceSegments, RelayKilledBetweenSegmentsOrphansCompleteViaReplay) {
  struct Shape {
    int n, release;
    std::vector<int> victims;
  };
  for (const Shape& s : {Shape{8, 2, {1, 2, 3}}, Shape{16, 4, {1, 2}}}) {
    const FenceConfig c = segmented(64, s.release, 256);
    for (int victim : s.victims) {
      size_t steps = 0;
      {
        FenceWorld w(s.n, c);
        w.set_blob_bytes(300);
        w.start_all();
        w.start_all();
        w.drive_all();
        for (const SentMessage& m : w.log())
          if (m.from == victim) ++steps;
      }
      for (bool root_only : {false, true}) {
        size_t partial_orphans = 0;
        for (size_t k = 0; k <= steps; ++k) {
          SCOPED_TRACE(fmt::format("n={} victim {} after {} sends{}", s.n, victim, k,
                                   root_only ? " (root told only)" : ""));
          FenceWorld w(s.n, c);
          w.set_blob_bytes(300);
          w.start_all();
          w.start_all();
          w.tap(victim).cut_after(k);
          if (root_only && k < steps) {
            w.drive([&] { return !w.alive(victim); }, 100000, true);
            w.tell(0);
          }
          w.drive_all();
          EXPECT_EQ(w.verify(0), "");
          EXPECT_EQ(w.verify(1), "");
          // Orphans that got part, not all, of generation 0 from the victim.
          std::map<int, uint64_t> from_victim;
          for (const SentMessage& m : w.log())
            if (m.from == victim && m.kind == FenceKind::release && m.generation == 0)
              from_victim[m.to] += m.length;
          for (const auto& [orphan, got] : from_victim)
            if (got > 0 && got < payload_bytes(s.n, 300)) ++partial_orphans;
        }
        EXPECT_GT(partial_orphans, 0u) << "no run killed the victim between segments";
      }
    }
  }
}

FenceMessage segment_message(uint64_t generation, runtime::PayloadKey key, uint64_t total,
                             uint64_t offset, Blob bytes) {
  FenceMessage m = release_header(fence_config(64, 2), generation);
  m.key = key;
  m.total = total;
  m.offset = offset;
  m.payload = std::make_shared<const Blob>(std::move(bytes));
  return m;
}

void expect_protocol_error(const Blob& bytes, const std::string& field) {
  try {
    runtime::decode_fence_message(bytes, 4);
    ADD_FAILURE() << "decoded; expected an error in field " << field;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::protocol) << e.what();
    EXPECT_NE(std::string(e.what()).find("field '" + field + "'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("rank 4"), std::string::npos) << e.what();
  }
}

TEST(FenceSegments, MalformedSegmentFramesAreNamedErrors) {
  const Blob four(4, std::byte{9});
  // Well formed: the last 4 bytes of 10, and an empty payload.
  EXPECT_NO_THROW(runtime::decode_fence_message(
      runtime::encode_fence_message(segment_message(0, {0, 0}, 10, 6, four)), 4));
  EXPECT_NO_THROW(runtime::decode_fence_message(
      runtime::encode_fence_message(segment_message(0, {0, 0}, 0, 0, {})), 4));
  // Offset beyond the total; bytes running past it.
  expect_protocol_error(runtime::encode_fence_message(segment_message(0, {0, 0}, 10, 11, {})),
                        "offset");
  expect_protocol_error(runtime::encode_fence_message(segment_message(0, {0, 0}, 10, 7, four)),
                        "segment");
  expect_protocol_error(
      runtime::encode_fence_message(segment_message(0, {0, 0}, UINT64_MAX, UINT64_MAX - 1, four)),
      "segment");
  // A release_up that is not the whole payload.
  FenceMessage up = segment_message(0, {0, 0}, 10, 0, four);
  up.header.kind = FenceKind::release_up;
  up.header.topology = tag::Topology::routing;
  expect_protocol_error(runtime::encode_fence_message(up), "segment");
  // An origin rank out of range.
  expect_protocol_error(
      runtime::encode_fence_message(segment_message(0, {1u << 30, 0}, 10, 0, four)), "origin");

  // Two segments of one result that disagree on its total: a named
  // protocol error on the receiving rank, not a crash or a hang.
  FenceWorld w(8, segmented(64, 2, 256));
  inject(w, 0, 3, segment_message(0, {0, 0}, 10, 0, four));
  inject(w, 0, 3, segment_message(0, {0, 0}, 12, 4, four));
  try {
    w.drive([] { return false; }, 50);
    ADD_FAILURE() << "no error for inconsistent totals";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::protocol) << e.what();
    EXPECT_NE(std::string(e.what()).find("rank 3: fence release g0: rank 0 sent a segment of a "
                                         "12-byte payload"),
              std::string::npos)
        << e.what();
  }
}

// A partial payload of an older result (its root departed mid-release) is
// replaced by a newer result's segments; the older result's later segments
// are dropped, and nothing is delivered until the newer one is whole.
TEST(FenceSegments, ANewerResultSupersedesAPartialOlderOne) {
  FenceWorld w(8, segmented(64, 2, 256));
  runtime::FenceResult result;
  result.origin = 1;
  result.origin_version = 1;
  result.departed = {0};
  result.blobs.resize(8);
  for (int r = 1; r < 8; ++r)
    result.blobs[static_cast<size_t>(r)] = FenceWorld::blob(r, 0);
  const Blob bytes = runtime::encode_fence_result(result);
  const uint64_t total = bytes.size();
  const auto slice = [&](uint64_t from, uint64_t to) {
    return Blob(bytes.begin() + static_cast<long>(from), bytes.begin() + static_cast<long>(to));
  };
  // Rank 3 holds 100 bytes of an older result (origin 0, version 0) ...
  inject(w, 1, 3, segment_message(0, {0, 0}, total + 5, 0, Blob(100, std::byte{1})));
  w.drive([&] { return w.engine(3).release_stats().segments_received == 1; });
  // ... then the newer result arrives in two pieces, an older segment between.
  const uint64_t half = total / 2;
  inject(w, 1, 3, segment_message(0, {1, 1}, total, 0, slice(0, half)));
  w.drive([&] { return w.engine(3).release_stats().superseded == 1; });
  inject(w, 1, 3, segment_message(0, {0, 0}, total + 5, 100, Blob(10, std::byte{1})));
  w.drive([&] { return w.engine(3).release_stats().dropped_segments == 1; });
  EXPECT_FALSE(w.got(3, 0));
  inject(w, 1, 3, segment_message(0, {1, 1}, total, half, slice(half, total)));
  w.drive([&] { return w.got(3, 0); });
  const runtime::FenceResult got = w.engine(3).take_result(0);
  EXPECT_EQ(got.blobs, result.blobs);
  EXPECT_EQ(got.departed, result.departed);
}

TEST(FenceSegments, ParameterIsValidatedByName) {
  EXPECT_EQ(FenceConfig::from_params().release_segment, 64u * 1024);
  {
    params::ScopedSet zero("fence_release_segment", "0");
    EXPECT_EQ(FenceConfig::from_params().release_segment, 0u);
  }
  {
    params::ScopedSet small("fence_release_segment", "100");
    try {
      FenceConfig::from_params();
      ADD_FAILURE() << "a 100-byte segment was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::invalid_parameter);
      EXPECT_NE(std::string(e.what()).find("fence_release_segment"), std::string::npos);
    }
  }
  for (const char* bad : {"2GiB", "-1", "lots"}) {
    try {
      params::ScopedSet set("fence_release_segment", bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::invalid_parameter) << bad;
      EXPECT_NE(std::string(e.what()).find("fence_release_segment"), std::string::npos) << bad;
    }
  }
}

}  // namespace
}  // namespace grove::testing
