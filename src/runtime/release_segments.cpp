#include "runtime/release_segments.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>

namespace grove::runtime {

bool SegmentAssembly::add(uint64_t offset, std::shared_ptr<const Blob> owner) {
  if (whole()) return false;  // every byte is here (and may have been taken)
  const uint64_t end = offset + owner->size();
  // The gaps of [offset, end) not covered by held pieces.
  std::vector<std::pair<uint64_t, uint64_t>> gaps;
  uint64_t at = offset;
  auto it = pieces_.upper_bound(offset);
  if (it != pieces_.begin()) {
    auto before = std::prev(it);
    at = std::max(at, before->first + before->second->size());
  }
  for (; at < end && it != pieces_.end() && it->first < end; ++it) {
    if (it->first > at) gaps.emplace_back(at, it->first);
    at = std::max(at, it->first + it->second->size());
  }
  if (at < end) gaps.emplace_back(at, end);
  if (gaps.empty()) return false;
  if (gaps.size() == 1 && gaps[0].first == offset && gaps[0].second == end) {
    have_ += owner->size();
    pieces_.emplace(offset, std::move(owner));
    return true;
  }
  for (const auto& [from, to] : gaps) {
    const auto* data = owner->data() + (from - offset);
    pieces_.emplace(from, std::make_shared<const Blob>(data, data + (to - from)));
    have_ += to - from;
  }
  return true;
}

std::shared_ptr<const Blob> SegmentAssembly::take() {
  if (pieces_.size() == 1 && pieces_.begin()->first == 0 &&
      pieces_.begin()->second->size() == total_) {
    auto out = std::move(pieces_.begin()->second);
    pieces_.clear();
    return out;
  }
  auto out = std::make_shared<Blob>(static_cast<size_t>(total_));
  for (const auto& [offset, piece] : pieces_)
    if (!piece->empty()) std::memcpy(out->data() + offset, piece->data(), piece->size());
  pieces_.clear();
  return out;
}

std::vector<std::pair<uint64_t, uint64_t>> cut_segments(uint64_t total, uint64_t segment) {
  if (segment == 0 || segment >= total) return {{0, total}};
  std::vector<std::pair<uint64_t, uint64_t>> out;
  out.reserve(static_cast<size_t>((total + segment - 1) / segment));
  for (uint64_t at = 0; at < total; at += segment)
    out.emplace_back(at, std::min(segment, total - at));
  return out;
}

}  // namespace grove::runtime
