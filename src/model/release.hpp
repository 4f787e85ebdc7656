#pragma once
// The release of the fence (docs/fence.md) as a broadcast over a k-ary tree, store
// and forward ("kary:R": the bcast collective's own kary builder) or
// pipelined in segments ("kary:R,seg=S": each segment is forwarded to the
// children as soon as it has arrived). `grove model radix` simulates these.
//
// The segmented form is built here, from the same tree and the same
// tree_bcast steps as the collective, one segment at a time; it belongs in
// bcast as "kary:K,seg=S" once that collective takes a segment for kary.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "sched/schedule.hpp"

namespace grove::model {

struct ReleaseShape {
  int radix = 4;
  uint64_t segment = 0;  // 0: store and forward (one message per edge)
  std::string to_string() const;
};

// "kary:R" or "kary:R,seg=S"; throws grove::Error(invalid_argument).
ReleaseShape parse_release(std::string_view text);

// One rank's schedule of the release of `bytes` from `root`.
sched::Schedule build_release(const ReleaseShape& shape, int size, int root, int rank,
                              size_t bytes);

}  // namespace grove::model
