// The five lessons of docs/fence.md, one test each (lesson 1, the tree
// derivation, is brute-forced in tests/unit/topo/live_tree_test.cpp), plus
// idempotent release, the configuration stamp and malformed input.
//
// Several tests hand-craft a release from one rank to another through the
// raw transport, so a rank can be addressed by whoever the test needs.

#include <gtest/gtest.h>

#include <random>

#include <fmt/format.h>

#include "grove/error.hpp"
#include "unit/runtime/fence_world.hpp"

namespace grove::testing {
namespace {

using runtime::FenceConfig;
using runtime::FenceKind;
using runtime::FenceMessage;

FenceMessage release_message(const FenceConfig& c, int n, uint64_t generation, uint64_t version) {
  runtime::FenceResult result;
  result.origin = 0;
  for (int r = 0; r < n; ++r)
    result.blobs.push_back(FenceWorld::blob(r, generation));
  FenceMessage m = release_header(c, generation);
  m.header.tree_version = version;
  m.payload = std::make_shared<const Blob>(runtime::encode_fence_result(result));
  m.key = {0, 0};               // result.origin, origin_version
  m.total = m.payload->size();  // the whole payload in one segment
  return m;
}

std::vector<SentMessage> sent_by(const FenceWorld& w, int rank) {
  std::vector<SentMessage> out;
  for (const SentMessage& m : w.log())
    if (m.from == rank) out.push_back(m);
  return out;
}

bool has(const FenceWorld& w, int from, int to, FenceKind kind) {
  for (const SentMessage& m : w.log())
    if (m.from == from && m.to == to && m.kind == kind) return true;
  return false;
}

// 8 ranks, release radix 2: 0 -> 1 2; 1 -> 3 4; 2 -> 5 6; 3 -> 7.
// Routing radix 64: every rank's routing parent is 0.

// Lesson 2: "is the sender my parent?" is never asked of the derived release
// tree. Rank 3 takes a release from 6, neither its release parent (1) nor its
// routing parent (0), at its own version: it delivers, forwards to its
// release child and acks; nothing is discarded.
TEST(FenceLessons, ReleaseFromANonParentOnADerivedEdgeIsAccepted) {
  const FenceConfig c = fence_config(64, 2);
  FenceWorld w(8, c);
  inject(w, 6, 3, release_message(c, 8, 0, 0));
  w.drive([&] { return has(w, 3, 6, FenceKind::ack); });
  EXPECT_TRUE(w.got(3, 0));
  EXPECT_TRUE(has(w, 3, 7, FenceKind::release));
  EXPECT_EQ(w.engine(3).release_stats().parked, 0u);
  EXPECT_EQ(w.engine(3).take_result(0).blobs[5], FenceWorld::blob(5, 0));
}

// Lesson 3: the ack answers whoever asked (6), not whoever rank 3 calls its
// parent (1 in the release tree, 0 in the routing tree).
TEST(FenceLessons, AckAnswersWhoeverAsked) {
  const FenceConfig c = fence_config(64, 2);
  FenceWorld w(8, c);
  inject(w, 6, 3, release_message(c, 8, 0, 0));
  w.drive([&] { return has(w, 3, 6, FenceKind::ack); });
  EXPECT_FALSE(has(w, 3, 1, FenceKind::ack));
  EXPECT_FALSE(has(w, 3, 0, FenceKind::ack));
  // A second asker is answered too, at once, since the subtree is complete.
  inject(w, 5, 3, release_message(c, 8, 0, 0));
  w.drive([&] { return has(w, 3, 5, FenceKind::ack); });
  EXPECT_EQ(w.engine(3).release_stats().duplicates, 1u);
}

// Lesson 4: nobody defers. Relay 1 dies holding nothing forwarded; rank 2,
// told first, replays to its new release children (4 and 5 once 1 is gone)
// at once, while the root still has not heard: it does not wait for its own
// parent to replay first.
TEST(FenceLessons, APromotedHolderReplaysWithoutWaitingForItsParent) {
  const FenceConfig c = fence_config(64, 2);
  FenceWorld w(8, c);
  w.start_all();
  w.tap(1).cut_after(1);  // its rollup only: it forwards nothing
  w.drive([&] { return !w.alive(1) && w.got(2, 0); }, 100000, true);
  EXPECT_FALSE(w.got(4, 0));
  w.tell(2);
  w.drive([&] { return w.got(4, 0); }, 100000, true);
  EXPECT_EQ(w.engine(0).view().version, 0u);  // the root has not heard yet
  bool replayed = false;
  for (const SentMessage& m : sent_by(w, 2))
    if (m.kind == FenceKind::release && m.to == 4 && m.tree_version == 1) replayed = true;
  EXPECT_TRUE(replayed);
  for (const SentMessage& m : sent_by(w, 0))
    EXPECT_EQ(m.tree_version, 0u) << "the root acted on a view it does not have";
  for (int r = 0; r < 8; ++r)
    if (w.alive(r)) w.tell(r);
  w.drive_all();
  EXPECT_EQ(w.verify(0), "");
}

// Lesson 5: a receiver behind the sender's tree version, addressed by a rank
// it does not call its (routing) parent, delivers locally and parks: no
// forward, no ack, until its own notices arrive; then it derives its place
// under the new view and acts.
TEST(FenceLessons, BehindAndNotFromTheParentParksUntilTheNoticeArrives) {
  const FenceConfig c = fence_config(64, 2);
  FenceWorld w(8, c);
  inject(w, 5, 3, release_message(c, 8, 0, 3));
  w.drive([&] { return w.got(3, 0); });
  for (int i = 0; i < 50; ++i)
    w.world().progress_all();
  EXPECT_EQ(w.engine(3).release_stats().parked, 1u);
  EXPECT_TRUE(sent_by(w, 3).empty()) << "a parked rank derived something";
  // Versions 1..3: ranks 1, 2, 4 departed. Under that view (0 3 5 6 7):
  // 0 -> 3 5; 3 -> 6 7. Rank 3 now forwards to 6 and 7.
  for (int departed : {1, 2, 4}) {
    w.kill(departed, {3});
  }
  w.drive([&] { return has(w, 3, 6, FenceKind::release) && has(w, 3, 7, FenceKind::release); });
  for (const SentMessage& m : sent_by(w, 3)) {
    if (m.kind == FenceKind::release) {
      EXPECT_EQ(m.tree_version, 3u);
    }
  }
  for (int r : {0, 5, 6, 7})
    w.tell(r);
  w.drive([&] { return has(w, 3, 5, FenceKind::ack); });
}

// ...and ordinary traffic, from the parent, is never parked, whatever its version.
TEST(FenceLessons, TrafficFromTheParentIsNeverParked) {
  const FenceConfig c = fence_config(64, 2);
  FenceWorld w(8, c);
  inject(w, 0, 3, release_message(c, 8, 0, 3));  // 0 is 3's routing parent
  w.drive([&] { return has(w, 3, 7, FenceKind::release); });
  EXPECT_EQ(w.engine(3).release_stats().parked, 0u);
}

// A release is idempotent at the receiver; a release of a retired
// generation is answered "retired", never an error.
TEST(FenceLessons, DuplicateAndRetiredReleasesAreNotInvolved) {
  const FenceConfig c = fence_config(64, 2);
  FenceWorld w(8, c);
  for (int g = 0; g < 3; ++g)
    w.start_all();
  w.drive_all();
  ASSERT_EQ(w.verify(2), "");
  inject(w, 5, 3, release_message(c, 8, 2, 0));  // held: a duplicate
  inject(w, 5, 3, release_message(c, 8, 0, 0));  // retired
  w.drive([&] {
    int acks = 0;
    for (const SentMessage& m : sent_by(w, 3))
      if (m.kind == FenceKind::ack && m.to == 5) ++acks;
    return acks == 2;
  });
  bool retired = false;
  for (const SentMessage& m : sent_by(w, 3))
    if (m.kind == FenceKind::ack && m.to == 5 && m.generation == 0) retired = m.retired;
  EXPECT_TRUE(retired);
  EXPECT_GE(w.engine(3).release_stats().duplicates, 1u);
  EXPECT_NO_THROW(w.engine(3).check_error());
}

// The topology and radices are stamped on the wire: a rank configured
// differently gets a named error, not a hang.
TEST(FenceLessons, ConfigurationMismatchIsNamed) {
  struct Case {
    FenceConfig odd;
    std::string names;
  };
  const std::vector<Case> cases = {
      {fence_config(64, 2), "release_radix=2"},
      {fence_config(64, 4, false), "low_radix_release=off"},
      {fence_config(16, 4), "rollup_radix=16"},
  };
  for (const Case& k : cases) {
    FenceWorld w(8, [&](int rank) { return rank == 5 ? k.odd : fence_config(64, 4); });
    w.start_all();
    try {
      w.drive_all();
      ADD_FAILURE() << "no error for " << k.odd.describe();
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::mismatch) << e.what();
      EXPECT_NE(std::string(e.what()).find(k.names), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("rank 5"), std::string::npos) << e.what();
    }
  }
  // A release on the routing tree's path (or stamped for the wrong tree).
  {
    const FenceConfig c = fence_config(64, 4);
    FenceWorld w(4, c);
    w.world().transport(2).am_send(1,
                                   runtime::fence_am_id(tag::Topology::routing, kFenceWorldContext),
                                   runtime::encode_fence_message(release_message(c, 4, 0, 0)));
    try {
      w.drive([] { return false; }, 50);
      ADD_FAILURE() << "no error for a release on the routing path";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::mismatch) << e.what();
      EXPECT_NE(std::string(e.what()).find("arrived on the routing tree's path"), std::string::npos)
          << e.what();
    }
  }
  // With the release tree off, release_radix is not consulted at all.
  FenceWorld w(8, [](int rank) { return fence_config(64, rank == 5 ? 2 : 4, false); });
  w.start_all();
  w.drive_all();
  EXPECT_EQ(w.verify(0), "");
}

TEST(FenceLessons, MalformedMessagesAreProtocolErrorsNotCrashes) {
  const FenceConfig c = fence_config(64, 2);
  std::vector<Blob> valid;
  valid.push_back(runtime::encode_fence_message(release_message(c, 5, 1, 2)));
  FenceMessage rollup;
  rollup.header.kind = FenceKind::rollup;
  rollup.contributions = {{1, Blob(9, std::byte{3})}, {4, Blob{}}};
  valid.push_back(runtime::encode_fence_message(rollup));
  FenceMessage view;
  view.header.kind = FenceKind::view;
  view.departed = {2, 3};
  valid.push_back(runtime::encode_fence_message(view));
  FenceMessage ack;
  ack.header.kind = FenceKind::ack;
  ack.header.topology = tag::Topology::release;
  valid.push_back(runtime::encode_fence_message(ack));
  std::mt19937 rng(5);
  for (const Blob& bytes : valid) {
    EXPECT_NO_THROW(runtime::decode_fence_message(bytes, 1));
    for (size_t cut = 0; cut < bytes.size(); ++cut) {
      try {
        runtime::decode_fence_message(std::span(bytes).first(cut), 1);
        ADD_FAILURE() << "a truncation to " << cut << " bytes decoded";
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), Errc::protocol);
      }
    }
    for (int i = 0; i < 2000; ++i) {
      Blob flipped = bytes;
      flipped[rng() % flipped.size()] ^= static_cast<std::byte>(1 + rng() % 255);
      try {
        runtime::decode_fence_message(flipped, 1);
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), Errc::protocol);
      }
    }
  }
  // Garbage on the fence's path is a named error on that rank.
  FenceWorld w(4, c);
  const Blob junk{std::byte{1}, std::byte{2}, std::byte{250}};
  w.world().transport(2).am_send(
      1, runtime::fence_am_id(tag::Topology::routing, kFenceWorldContext), junk);
  try {
    w.drive([] { return false; }, 50);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::protocol) << e.what();
    EXPECT_NE(std::string(e.what()).find("rank 2"), std::string::npos) << e.what();
  }
}

// Equal radices: the release tree is the routing tree for every rank and
// every failure pattern, seen through the engine; and a one-time warning.
TEST(FenceLessons, EqualRadicesGiveTheRoutingTreeAndWarnOnce) {
  for (int radix : {2, 3, 4}) {
    FenceWorld w(9, fence_config(radix, radix));
    for (uint32_t mask = 0; mask < (1u << 9); ++mask) {
      if (mask & (1u << 4)) continue;  // rank 4 asks about its own tree
      std::set<int> departed;
      for (int r = 0; r < 9; ++r)
        if (mask & (1u << r)) departed.insert(r);
      const topo::LiveTree routing(9, 0, departed, radix);
      runtime::FenceEngine fresh(w.world().transport(4), 100 + mask % 1000,
                                 fence_config(radix, radix));
      fresh.adopt_view(departed, mask + 1);
      for (int r = 0; r < 9; ++r) {
        ASSERT_EQ(fresh.tree(tag::Topology::release).parent(r),
                  fresh.tree(tag::Topology::routing).parent(r));
        ASSERT_EQ(fresh.tree(tag::Topology::release).children(r),
                  fresh.tree(tag::Topology::routing).children(r));
        ASSERT_EQ(fresh.tree(tag::Topology::release).children(r), routing.children(r));
      }
    }
  }
  ::testing::internal::CaptureStderr();
  runtime::warn_if_release_is_routing(fence_config(8, 8), 0);
  runtime::warn_if_release_is_routing(fence_config(8, 8), 0);
  const std::string printed = ::testing::internal::GetCapturedStderr();
  // Printed at most once per process (an earlier test may have printed it).
  EXPECT_LE(std::count(printed.begin(), printed.end(), '\n'), 1);
}

TEST(FenceLessons, TimingStampsCoverage) {
  FenceConfig c = fence_config(64, 2);
  c.timing = true;
  FenceWorld w(8, c);
  w.start_all();
  w.drive_all();
  w.drive([&] { return w.engine(0).timing(0) && w.engine(0).timing(0)->covered > 0; });
  const auto root = *w.engine(0).timing(0);
  EXPECT_GT(root.payload_bytes, 0u);
  for (int r = 0; r < 8; ++r) {
    const auto t = w.engine(r).timing(0);
    ASSERT_TRUE(t) << "rank " << r;
    EXPECT_EQ(t->started, root.started);
    EXPECT_GE(t->held, t->started);
    EXPECT_LE(t->held, root.covered);
  }
}

}  // namespace
}  // namespace grove::testing
