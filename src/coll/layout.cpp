#include "coll/layout.hpp"

#include <algorithm>
#include <numeric>

namespace grove::coll {

BlockLayout BlockLayout::uniform(int blocks, size_t block_bytes) {
  return packed(std::vector<size_t>(static_cast<size_t>(blocks), block_bytes));
}

BlockLayout BlockLayout::packed(std::vector<size_t> lengths) {
  BlockLayout layout;
  layout.lengths = std::move(lengths);
  layout.offsets.resize(layout.lengths.size());
  size_t offset = 0;
  for (size_t i = 0; i < layout.lengths.size(); ++i) {
    layout.offsets[i] = offset;
    offset += layout.lengths[i];
  }
  return layout;
}

BlockLayout BlockLayout::split(size_t count, size_t element_bytes, int pieces) {
  const auto n = static_cast<size_t>(pieces);
  std::vector<size_t> lengths(n);
  for (size_t i = 0; i < n; ++i)
    lengths[i] = (count / n + (i < count % n ? 1 : 0)) * element_bytes;
  return packed(std::move(lengths));
}

size_t BlockLayout::total() const {
  return std::accumulate(lengths.begin(), lengths.end(), size_t{0});
}

size_t BlockLayout::extent() const {
  size_t end = 0;
  for (size_t i = 0; i < lengths.size(); ++i)
    end = std::max(end, offsets[i] + lengths[i]);
  return end;
}

size_t BlockLayout::max_length() const {
  return lengths.empty() ? 0 : *std::max_element(lengths.begin(), lengths.end());
}

size_t BlockLayout::span_offset(size_t first) const {
  return first < offsets.size() ? offsets[first] : extent();
}

size_t BlockLayout::span_length(size_t first, size_t last) const {
  return span_offset(last) - span_offset(first);
}

Fold::Fold(int n) : size(n) {
  while (p2 * 2 <= n) {
    p2 *= 2;
    ++steps;
  }
  rem = n - p2;
}

int Fold::virtual_of(int rank) const {
  if (rank < 2 * rem) return rank % 2 == 0 ? rank / 2 : -1;
  return rank - rem;
}

}  // namespace grove::coll
