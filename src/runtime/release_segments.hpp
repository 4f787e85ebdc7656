#pragma once
// Reassembly of a segmented release (docs/fence.md, "Pipelined release").
// A relay of the release forwards each segment as it arrives; the bytes it
// has are kept here until the whole payload is held, and only then is the
// payload delivered or acknowledged.
//
// Invariants:
// - pieces are disjoint byte ranges of [0, total); `have` is their sum, so
//   whole() is exact whatever segment sizes the senders used (a replay may be
//   cut differently from the first forward: only new bytes are kept);
// - memory grows with the bytes received, never with a claimed total, so a
//   corrupt total cannot make a rank allocate (the whole buffer is built
//   only once every byte is here);
// - a duplicate (no new byte) changes nothing.

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "bootstrap/bootstrap.hpp"

namespace grove::runtime {

class SegmentAssembly {
 public:
  SegmentAssembly() = default;
  explicit SegmentAssembly(uint64_t total) : total_(total) {}

  uint64_t total() const { return total_; }
  uint64_t have() const { return have_; }
  bool whole() const { return have_ == total_; }

  // Adds `bytes` at `offset` (offset + size <= total: checked by the
  // decoder); returns whether any byte was new. `owner` holds exactly
  // these bytes and is kept as is when all of them are new (no copy).
  bool add(uint64_t offset, std::shared_ptr<const Blob> owner);
  // The whole payload, once whole(); the pieces are released (whole() stays
  // true, and every later add() is a duplicate).
  std::shared_ptr<const Blob> take();

  // The held pieces in offset order (for a replay of a partial payload).
  template <class F>
  void for_each(F&& f) const {
    for (const auto& [offset, piece] : pieces_)
      f(offset, piece);
  }

 private:
  uint64_t total_ = 0;
  uint64_t have_ = 0;
  std::map<uint64_t, std::shared_ptr<const Blob>> pieces_;  // offset -> bytes, disjoint
};

// [offset, length) of each segment of a `total`-byte payload cut every
// `segment` bytes (0: one segment). An empty payload is one empty segment,
// so every release sends at least one message per edge.
std::vector<std::pair<uint64_t, uint64_t>> cut_segments(uint64_t total, uint64_t segment);

}  // namespace grove::runtime
