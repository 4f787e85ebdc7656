// Pure parts of the shared-memory collectives (src/coll/shm/): the chunks of
// the two-phase reduction, the call signature, the segment's size. The
// protocol itself runs across processes in tests/mp/shm.cpp.

#include <gtest/gtest.h>

#include "coll/shm/group.hpp"
#include "coll/shm/reduce_chunks.hpp"

namespace grove::shm {
namespace {

TEST(ShmReductionChunk, ChunksTileTheVectorInMemberOrderOnElementBoundaries) {
  for (size_t element : {1, 2, 4, 8}) {
    for (int members = 1; members <= 9; ++members) {
      for (size_t count : {0, 1, 2, 7, 8, 9, 1000, 1021}) {
        const size_t bytes = count * element;
        size_t next = 0;
        size_t smallest = bytes, largest = 0;
        for (int m = 0; m < members; ++m) {
          const Chunk c = reduction_chunk(bytes, element, members, m);
          EXPECT_EQ(c.first, next) << element << " " << members << " " << count << " " << m;
          EXPECT_EQ(c.first % element, 0u);
          EXPECT_EQ(c.length % element, 0u);
          next = c.first + c.length;
          smallest = std::min(smallest, c.length);
          largest = std::max(largest, c.length);
        }
        EXPECT_EQ(next, bytes);
        // Even split: chunks differ by at most one element.
        EXPECT_LE(largest - smallest, element);
      }
    }
  }
}

TEST(ShmCallSignature, DescribesTheCallAndPacksFieldsApart) {
  const CallSignature bcast{coll::Collective::bcast, 3, 4096};
  EXPECT_EQ(bcast.describe(), "bcast(root 3, 4096 B)");
  const CallSignature allreduce{coll::Collective::allreduce, -1, 64};
  EXPECT_EQ(allreduce.describe(), "allreduce(64 B)");
  EXPECT_EQ((CallSignature{coll::Collective::barrier, -1, 0}.describe()), "barrier");
  // Differing in any one field differs in the packed word, within 40 bits.
  const uint64_t base = bcast.pack();
  EXPECT_LT(base, uint64_t{1} << 40);
  EXPECT_NE(base, (CallSignature{coll::Collective::scatter, 3, 4096}.pack()));
  EXPECT_NE(base, (CallSignature{coll::Collective::bcast, 2, 4096}.pack()));
  EXPECT_NE(base, (CallSignature{coll::Collective::bcast, 3, 4097}.pack()));
  EXPECT_NE(allreduce.pack(), (CallSignature{coll::Collective::allreduce, 0, 64}.pack()));
}

TEST(ShmSegment, LengthHoldsHeaderLinesAndTwoSlotsPerMember) {
  // 2 members: header + 2 control lines + 4 inline lines = 448 bytes, one page.
  EXPECT_EQ(segment_length(2, 4096), 4096u + 2 * 2 * 4096);
  // 21 members: 64 + 21 * 3 * 64 = 4096 bytes, exactly one page; 22: two.
  EXPECT_EQ(segment_length(21, 4096), 4096u + 21 * 2 * 4096);
  EXPECT_EQ(segment_length(22, 4096), 8192u + 22 * 2 * 4096);
  // 64 members: 64 + 64 * 3 * 64 = 12352 bytes, rounded to four pages.
  EXPECT_EQ(segment_length(64, 65536), 16384u + 64 * 2 * 65536);
  EXPECT_EQ(sizeof(ControlLine), 64u);
  EXPECT_EQ(sizeof(InlineLine), 64u);
}

}  // namespace
}  // namespace grove::shm
