#include "rma/ring_layout.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "grove/error.hpp"

namespace grove::rma {
namespace {

struct EncodedLane {
  int32_t src;
  int32_t dst;
  uint32_t depth;
  uint32_t flags;  // kLaneMapped
  uint64_t capacity;
};

constexpr uint32_t kLaneMapped = 1;

struct EncodedHeader {
  uint32_t mode;
  uint32_t count;
  uint64_t direct_bytes;
};

std::vector<LaneSpec> decode(std::span<const std::byte> bytes, RingMode* mode,
                             uint64_t* direct_bytes, std::vector<bool>* mapped, bool* ok) {
  std::vector<LaneSpec> lanes;
  *ok = false;
  EncodedHeader header{};
  if (bytes.size() < sizeof(header)) return lanes;
  std::memcpy(&header, bytes.data(), sizeof(header));
  if (bytes.size() != sizeof(header) + header.count * sizeof(EncodedLane)) return lanes;
  *mode = static_cast<RingMode>(header.mode);
  *direct_bytes = header.direct_bytes;
  for (uint32_t i = 0; i < header.count; ++i) {
    EncodedLane e{};
    std::memcpy(&e, bytes.data() + sizeof(header) + i * sizeof(EncodedLane), sizeof(e));
    lanes.push_back({e.src, e.dst, e.depth, e.capacity});
    mapped->push_back((e.flags & kLaneMapped) != 0);
  }
  *ok = true;
  return lanes;
}

}  // namespace

std::string_view RingLayout::mode_name(RingMode mode) {
  return mode == RingMode::safe ? "safe" : "raw";
}

std::string RingLayout::describe(const LaneSpec& lane) {
  return fmt::format("{} -> {} (depth {}, capacity {} B)", lane.src, lane.dst, lane.depth,
                     lane.capacity);
}

RingLayout::RingLayout(std::vector<LaneSpec> lanes, RingMode mode, int size, int rank,
                       uint64_t direct_bytes)
    : mode_(mode), size_(size), direct_bytes_(direct_bytes), lanes_(std::move(lanes)) {
  if (mode != RingMode::safe && mode != RingMode::raw) {
    throw Error(Errc::invalid_argument,
                fmt::format("rank {}: ring: mode {} is neither safe nor raw", rank,
                            static_cast<int>(mode)));
  }
  for (const LaneSpec& lane : lanes_) {
    std::string cause;
    if (lane.src < 0 || lane.src >= size || lane.dst < 0 || lane.dst >= size) {
      cause = fmt::format("a rank outside [0, {})", size);
    } else if (lane.src == lane.dst) {
      cause = "a lane needs two different ranks";
    } else if (lane.depth == 0) {
      cause = "depth 0 (a lane needs at least one slot)";
    } else if (lane.depth > kMaxDepth) {
      cause = fmt::format("depth above {}", kMaxDepth);
    } else if (lane.capacity > kMaxCapacity) {
      cause = fmt::format("capacity above {} B", kMaxCapacity);
    }
    if (!cause.empty()) {
      throw Error(Errc::invalid_argument,
                  fmt::format("rank {}: ring: lane {}: {}; no ring was created", rank,
                              describe(lane), cause));
    }
  }
  std::sort(lanes_.begin(), lanes_.end(), [](const LaneSpec& a, const LaneSpec& b) {
    return a.src != b.src ? a.src < b.src : a.dst < b.dst;
  });
  for (size_t i = 1; i < lanes_.size(); ++i) {
    if (lanes_[i].src == lanes_[i - 1].src && lanes_[i].dst == lanes_[i - 1].dst) {
      throw Error(Errc::invalid_argument,
                  fmt::format("rank {}: ring: two lanes from {} to {} ({} and {}); one lane per "
                              "pair of ranks, no ring was created",
                              rank, lanes_[i].src, lanes_[i].dst, describe(lanes_[i - 1]),
                              describe(lanes_[i])));
    }
  }
  mapped_.assign(lanes_.size(), false);
  place();
}

void RingLayout::set_mapped(std::vector<bool> mapped) {
  mapped.resize(lanes_.size(), false);
  mapped_ = std::move(mapped);
  place();
}

bool RingLayout::mapping_matters() const {
  for (const LaneSpec& lane : lanes_) {
    if (lane.capacity > direct_bytes_) return true;
  }
  return false;
}

void RingLayout::place() {
  region_bytes_.assign(static_cast<size_t>(size_), 0);
  inbox_offset_.assign(lanes_.size(), 0);
  credit_offset_.assign(lanes_.size(), 0);
  staging_offset_.assign(lanes_.size(), 0);
  for (size_t i = 0; i < lanes_.size(); ++i) {
    size_t& end = region_bytes_[static_cast<size_t>(lanes_[i].dst)];
    inbox_offset_[i] = end;
    end += sizeof(LaneHeader) + lanes_[i].depth * stride(static_cast<int>(i));
  }
  for (size_t i = 0; i < lanes_.size(); ++i) {
    size_t& end = region_bytes_[static_cast<size_t>(lanes_[i].src)];
    credit_offset_[i] = end;
    end += sizeof(CreditLine);
  }
  for (size_t i = 0; i < lanes_.size(); ++i) {
    if (!direct(static_cast<int>(i))) continue;
    size_t& end = region_bytes_[static_cast<size_t>(lanes_[i].src)];
    staging_offset_[i] = end;
    end += lanes_[i].depth * staging_stride(static_cast<int>(i));
  }
}

uint64_t RingLayout::inline_capacity(int lane) const {
  const uint64_t capacity = lanes_[static_cast<size_t>(lane)].capacity;
  if (!direct(lane)) return capacity;
  return std::max<uint64_t>(direct_bytes_, kDescriptorBytes);
}

size_t RingLayout::staging_stride(int lane) const {
  if (!direct(lane)) return 0;
  // [seq u64][payload], to a cache line.
  return (8 + lanes_[static_cast<size_t>(lane)].capacity + kCacheLine - 1) / kCacheLine *
         kCacheLine;
}

int RingLayout::find(int src, int dst) const {
  for (size_t i = 0; i < lanes_.size(); ++i) {
    if (lanes_[i].src == src && lanes_[i].dst == dst) return static_cast<int>(i);
  }
  return -1;
}

size_t RingLayout::slot_offset(int lane, uint64_t seq) const {
  const LaneSpec& l = lanes_[static_cast<size_t>(lane)];
  return inbox_offset(lane) + sizeof(LaneHeader) + ((seq - 1) % l.depth) * stride(lane);
}

std::vector<std::byte> RingLayout::encode() const {
  const EncodedHeader header{static_cast<uint32_t>(mode_), static_cast<uint32_t>(lanes_.size()),
                             direct_bytes_};
  std::vector<std::byte> out(sizeof(header) + lanes_.size() * sizeof(EncodedLane));
  std::memcpy(out.data(), &header, sizeof(header));
  for (size_t i = 0; i < lanes_.size(); ++i) {
    const EncodedLane e{lanes_[i].src, lanes_[i].dst, lanes_[i].depth, mapped_[i] ? kLaneMapped : 0,
                        lanes_[i].capacity};
    std::memcpy(out.data() + sizeof(header) + i * sizeof(e), &e, sizeof(e));
  }
  return out;
}

void RingLayout::check_same(std::span<const std::byte> other, int other_rank, int rank) const {
  RingMode theirs_mode{};
  uint64_t theirs_direct = 0;
  std::vector<bool> theirs_mapped;
  bool ok = false;
  const std::vector<LaneSpec> theirs =
      decode(other, &theirs_mode, &theirs_direct, &theirs_mapped, &ok);
  auto fail = [&](const std::string& difference) {
    throw Error(Errc::mismatch,
                fmt::format("rank {}: ring: rank {}'s lane list differs from rank {}'s: {}; every "
                            "rank must pass the same lanes and mode, no ring was created",
                            rank, other_rank, rank, difference));
  };
  if (!ok) fail(fmt::format("its description is malformed ({} bytes)", other.size()));
  if (theirs_mode != mode_) {
    fail(fmt::format("mode {} there, {} here", mode_name(theirs_mode), mode_name(mode_)));
  }
  if (theirs_direct != direct_bytes_) {
    fail(fmt::format("ring_direct_bytes {} there, {} here", theirs_direct, direct_bytes_));
  }
  for (size_t i = 0; i < std::max(theirs.size(), lanes_.size()); ++i) {
    if (i >= theirs.size()) fail(fmt::format("lane {} missing there", describe(lanes_[i])));
    if (i >= lanes_.size()) fail(fmt::format("lane {} missing here", describe(theirs[i])));
    if (!(theirs[i] == lanes_[i])) {
      fail(fmt::format("lane {} there, {} here", describe(theirs[i]), describe(lanes_[i])));
    }
    if (theirs_mapped[i] != mapped_[i]) {
      fail(fmt::format("lane {} is {}mapped there, {}mapped here", describe(lanes_[i]),
                       theirs_mapped[i] ? "" : "not ", mapped_[i] ? "" : "not "));
    }
  }
}

}  // namespace grove::rma
