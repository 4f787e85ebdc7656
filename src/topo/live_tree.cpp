#include "topo/live_tree.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "grove/error.hpp"

namespace grove::topo {

LiveTree::LiveTree(int size, int root, const std::set<int>& departed, int radix)
    : size_(size), root_request_(root), radix_(radix) {
  if (size < 1) throw Error(Errc::invalid_argument, fmt::format("live tree: size {} < 1", size));
  if (root < 0 || root >= size) {
    throw Error(Errc::invalid_argument,
                fmt::format("live tree: root {} is outside [0, {})", root, size));
  }
  if (radix < 2) throw Error(Errc::invalid_argument, fmt::format("live tree: radix {} < 2", radix));
  for (int rank : departed) {
    if (rank < 0 || rank >= size) {
      throw Error(Errc::invalid_argument,
                  fmt::format("live tree: departed rank {} is outside [0, {})", rank, size));
    }
  }
  members_.reserve(static_cast<size_t>(size) - std::min(departed.size(), size_t(size)));
  for (int v = 0; v < size; ++v) {
    const int rank = (root + v) % size;
    if (departed.count(rank) == 0) members_.push_back(rank);
  }
  if (members_.empty()) {
    throw Error(Errc::invalid_argument, fmt::format("live tree: all {} ranks have departed", size));
  }
}

// members_ is sorted by (rank - root) mod size, so a binary search on that key finds a rank.
int LiveTree::position(int rank) const {
  if (rank < 0 || rank >= size_) return -1;
  const auto key = [this](int r) { return (r - root_request_ + size_) % size_; };
  const auto it = std::lower_bound(members_.begin(), members_.end(), rank,
                                   [&](int member, int r) { return key(member) < key(r); });
  if (it == members_.end() || *it != rank) return -1;
  return static_cast<int>(it - members_.begin());
}

int LiveTree::parent(int rank) const {
  const int p = position(rank);
  if (p <= 0) return -1;
  return members_[static_cast<size_t>((p - 1) / radix_)];
}

std::vector<int> LiveTree::children(int rank) const {
  std::vector<int> out;
  const int p = position(rank);
  if (p < 0) return out;
  const int64_t n = static_cast<int64_t>(members_.size());
  const int64_t first = int64_t{radix_} * p + 1;
  for (int64_t c = first; c < first + radix_ && c < n; ++c)
    out.push_back(members_[static_cast<size_t>(c)]);
  return out;
}

std::vector<int> LiveTree::subtree(int rank) const {
  std::vector<int> out;
  const int p = position(rank);
  if (p < 0) return out;
  // Level by level: the positions of one level of a heap subtree are contiguous.
  const int64_t n = static_cast<int64_t>(members_.size());
  int64_t lo = p, hi = p;  // inclusive range of this level
  while (lo < n) {
    for (int64_t q = lo; q <= std::min(hi, n - 1); ++q)
      out.push_back(members_[static_cast<size_t>(q)]);
    lo = lo * radix_ + 1;
    hi = hi * radix_ + radix_;
  }
  return out;
}

int LiveTree::depth() const {
  int d = 0;
  const int64_t n = static_cast<int64_t>(members_.size());
  for (int64_t last = n - 1; last > 0; last = (last - 1) / radix_)
    ++d;
  return d;
}

}  // namespace grove::topo
