#pragma once
// How a collective's buffer divides into per-rank blocks or chunks, and the
// power-of-two fold that recursive doubling and halving use for any size.

#include <cstddef>
#include <vector>

namespace grove::coll {

// Where each block lives in a block-indexed buffer.
struct BlockLayout {
  std::vector<size_t> offsets;
  std::vector<size_t> lengths;

  static BlockLayout uniform(int blocks, size_t block_bytes);
  // Packed in order: offsets are the prefix sums of `lengths`.
  static BlockLayout packed(std::vector<size_t> lengths);
  // `count` elements of `element_bytes` split into `pieces` chunks whose
  // element counts differ by at most one, the larger ones first.
  static BlockLayout split(size_t count, size_t element_bytes, int pieces);

  size_t size() const { return lengths.size(); }
  size_t total() const;   // sum of lengths
  size_t extent() const;  // max(offset + length): the buffer size needed
  size_t max_length() const;
  // Bytes from block `first` up to (excluding) block `last` of a packed
  // layout, as one range.
  size_t span_offset(size_t first) const;
  size_t span_length(size_t first, size_t last) const;
};

// Non-power-of-two handling of Thakur, Rabenseifner & Gropp (2005): with p2
// the largest power of two <= size and rem = size - p2, ranks 0 .. 2*rem-1
// pair up as (2i, 2i+1); the odd one of each pair hands its data to the even
// one and sits out the power-of-two phase, whose p2 participants are the
// virtual ranks 0 .. p2-1. Virtual rank v < rem stands for real ranks 2v and
// 2v+1, v >= rem for real rank v + rem, so the real ranks a virtual range
// stands for are contiguous. The ranks here may be relative to a root.
struct Fold {
  int size = 1;
  int p2 = 1;
  int rem = 0;
  int steps = 0;  // log2(p2)

  explicit Fold(int n);
  bool sits_out(int rank) const { return rank < 2 * rem && rank % 2 == 1; }
  bool absorbs(int rank) const { return rank < 2 * rem && rank % 2 == 0; }
  // -1 for a rank that sits out.
  int virtual_of(int rank) const;
  // The participating real rank of virtual rank v.
  int real_of(int v) const { return v < rem ? 2 * v : v + rem; }
  // The real ranks virtual rank v stands for: [first_real(v), end_real(v)).
  int first_real(int v) const { return v < rem ? 2 * v : v + rem; }
  int end_real(int v) const { return v < rem ? 2 * v + 2 : v + rem + 1; }
};

}  // namespace grove::coll
