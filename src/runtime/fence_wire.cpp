#include "runtime/fence_wire.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "grove/error.hpp"

namespace grove::runtime {
namespace {

// Little-endian fixed-width fields: simple, and every rank of one job runs
// the same build on the same architecture.
class Writer {
 public:
  explicit Writer(Blob& out) : out_(out) {}
  template <class T>
  void put(T value) {
    const size_t at = out_.size();
    out_.resize(at + sizeof value);
    std::memcpy(out_.data() + at, &value, sizeof value);
  }
  void bytes(std::span<const std::byte> data) {
    put<uint64_t>(data.size());
    out_.insert(out_.end(), data.begin(), data.end());
  }

 private:
  Blob& out_;
};

class Reader {
 public:
  Reader(std::span<const std::byte> in, std::string what) : in_(in), what_(std::move(what)) {}
  template <class T>
  T get(std::string_view field) {
    need(sizeof(T), field);
    T value;
    std::memcpy(&value, in_.data() + at_, sizeof value);
    at_ += sizeof value;
    return value;
  }
  std::span<const std::byte> bytes(std::string_view field) {
    const uint64_t length = get<uint64_t>(field);
    need(length, field);
    auto out = in_.subspan(at_, static_cast<size_t>(length));
    at_ += static_cast<size_t>(length);
    return out;
  }
  // A count of items that each take at least `min_item` bytes: bounded by
  // what is left, so a corrupt count cannot make the decoder allocate.
  uint32_t count(std::string_view field, size_t min_item) {
    const uint32_t n = get<uint32_t>(field);
    if (min_item > 0 && n > (in_.size() - at_) / min_item) fail(field, "count exceeds the message");
    return n;
  }
  void finish() {
    if (at_ != in_.size())
      fail("end", fmt::format("{} unexpected trailing bytes", in_.size() - at_));
  }
  [[noreturn]] void fail(std::string_view field, std::string_view why) const {
    throw Error(Errc::protocol, fmt::format("{}: field '{}': {}", what_, field, why));
  }

 private:
  void need(uint64_t n, std::string_view field) const {
    if (n > in_.size() - at_) {
      fail(field, fmt::format("needs {} bytes, {} left of {}", n, in_.size() - at_, in_.size()));
    }
  }
  std::span<const std::byte> in_;
  std::string what_;
  size_t at_ = 0;
};

std::vector<int> read_ranks(Reader& r, std::string_view field) {
  const uint32_t n = r.count(field, sizeof(uint32_t));
  std::vector<int> out;
  out.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t rank = r.get<uint32_t>(field);
    if (rank > (1u << 24)) r.fail(field, fmt::format("rank {} is out of range", rank));
    out.push_back(static_cast<int>(rank));
  }
  return out;
}

void write_ranks(Writer& w, const std::vector<int>& ranks) {
  w.put<uint32_t>(static_cast<uint32_t>(ranks.size()));
  for (int rank : ranks)
    w.put<uint32_t>(static_cast<uint32_t>(rank));
}

}  // namespace

std::string_view fence_kind_name(FenceKind kind) {
  switch (kind) {
    case FenceKind::rollup:
      return "rollup";
    case FenceKind::release:
      return "release";
    case FenceKind::ack:
      return "ack";
    case FenceKind::view:
      return "view";
    case FenceKind::release_up:
      return "release_up";
  }
  return "?";
}

std::string_view topology_name(tag::Topology topology) {
  switch (topology) {
    case tag::Topology::routing:
      return "routing";
    case tag::Topology::release:
      return "release";
    case tag::Topology::none:
      return "none";
    case tag::Topology::point_to_point:
      return "point_to_point";
  }
  return "?";
}

std::span<const std::byte> segment_bytes(const FenceMessage& m) {
  if (!m.payload) return {};
  const std::span<const std::byte> all(*m.payload);
  const size_t at = std::min(m.payload_at, all.size());
  return all.subspan(at, std::min(m.payload_length, all.size() - at));
}

Blob encode_fence_message(const FenceMessage& m) {
  Blob out;
  Writer w(out);
  const FenceHeader& h = m.header;
  w.put<uint8_t>(kFenceWireFormat);
  w.put<uint8_t>(static_cast<uint8_t>(h.kind));
  w.put<uint8_t>(static_cast<uint8_t>(h.topology));
  w.put<uint8_t>(h.low_radix_release ? 1 : 0);
  w.put<uint32_t>(h.routing_radix);
  w.put<uint32_t>(h.release_radix);
  w.put<uint32_t>(h.context);
  w.put<uint64_t>(h.generation);
  w.put<uint64_t>(h.tree_version);
  switch (h.kind) {
    case FenceKind::rollup:
      w.put<uint32_t>(static_cast<uint32_t>(m.contributions.size()));
      for (const auto& [rank, blob] : m.contributions) {
        w.put<uint32_t>(static_cast<uint32_t>(rank));
        w.bytes(blob);
      }
      break;
    case FenceKind::release:
    case FenceKind::release_up:
      w.put<double>(m.release_started);
      w.put<uint32_t>(m.key.origin);
      w.put<uint64_t>(m.key.version);
      w.put<uint64_t>(m.total);
      w.put<uint64_t>(m.offset);
      w.bytes(segment_bytes(m));
      break;
    case FenceKind::ack:
      w.put<uint8_t>(m.retired ? 1 : 0);
      w.put<double>(m.held_latest);
      break;
    case FenceKind::view:
      write_ranks(w, m.departed);
      break;
  }
  return out;
}

FenceMessage decode_fence_message(std::span<const std::byte> bytes, int source) {
  Reader r(bytes, fmt::format("fence message from rank {} ({} bytes)", source, bytes.size()));
  FenceMessage m;
  FenceHeader& h = m.header;
  const auto format = r.get<uint8_t>("format");
  if (format != kFenceWireFormat) {
    r.fail("format",
           fmt::format("wire format {} (this build speaks {})", format, kFenceWireFormat));
  }
  const auto kind = r.get<uint8_t>("kind");
  if (kind < 1 || kind > 5) r.fail("kind", fmt::format("unknown kind {}", kind));
  h.kind = static_cast<FenceKind>(kind);
  const auto topology = r.get<uint8_t>("topology");
  if (topology != 1 && topology != 2) r.fail("topology", fmt::format("unknown {}", topology));
  h.topology = static_cast<tag::Topology>(topology);
  const auto low = r.get<uint8_t>("low_radix_release");
  if (low > 1) r.fail("low_radix_release", fmt::format("{} is not a bool", low));
  h.low_radix_release = low == 1;
  h.routing_radix = r.get<uint32_t>("routing_radix");
  h.release_radix = r.get<uint32_t>("release_radix");
  h.context = r.get<uint32_t>("context");
  h.generation = r.get<uint64_t>("generation");
  h.tree_version = r.get<uint64_t>("tree_version");
  switch (h.kind) {
    case FenceKind::rollup: {
      const uint32_t n = r.count("contributions", sizeof(uint32_t) + sizeof(uint64_t));
      m.contributions.reserve(n);
      for (uint32_t i = 0; i < n; ++i) {
        const auto rank = r.get<uint32_t>("contribution rank");
        if (rank > (1u << 24)) r.fail("contribution rank", fmt::format("{} is out of range", rank));
        const auto blob = r.bytes("contribution");
        m.contributions.emplace_back(static_cast<int>(rank), Blob(blob.begin(), blob.end()));
      }
      break;
    }
    case FenceKind::release:
    case FenceKind::release_up: {
      m.release_started = r.get<double>("release_started");
      m.key.origin = r.get<uint32_t>("origin");
      if (m.key.origin > (1u << 24))
        r.fail("origin", fmt::format("rank {} is out of range", m.key.origin));
      m.key.version = r.get<uint64_t>("origin_version");
      m.total = r.get<uint64_t>("total");
      m.offset = r.get<uint64_t>("offset");
      if (m.offset > m.total)
        r.fail("offset", fmt::format("segment at {} of a {}-byte payload", m.offset, m.total));
      const auto payload = r.bytes("segment");
      if (payload.size() > m.total - m.offset) {
        r.fail("segment", fmt::format("{} bytes at {} run past the {}-byte payload", payload.size(),
                                      m.offset, m.total));
      }
      if (h.kind == FenceKind::release_up && (m.offset != 0 || payload.size() != m.total)) {
        r.fail("segment", fmt::format("a release_up carries the whole payload, not {} bytes at {} "
                                      "of {}",
                                      payload.size(), m.offset, m.total));
      }
      m.payload = std::make_shared<const Blob>(payload.begin(), payload.end());
      break;
    }
    case FenceKind::ack: {
      const auto retired = r.get<uint8_t>("retired");
      if (retired > 1) r.fail("retired", fmt::format("{} is not a bool", retired));
      m.retired = retired == 1;
      m.held_latest = r.get<double>("held_latest");
      break;
    }
    case FenceKind::view:
      m.departed = read_ranks(r, "departed");
      break;
  }
  r.finish();
  return m;
}

Blob encode_fence_result(const FenceResult& result) {
  Blob out;
  Writer w(out);
  w.put<uint32_t>(static_cast<uint32_t>(result.origin));
  w.put<uint64_t>(result.origin_version);
  write_ranks(w, result.departed);
  w.put<uint32_t>(static_cast<uint32_t>(result.blobs.size()));
  for (const Blob& blob : result.blobs)
    w.bytes(blob);
  return out;
}

FenceResult decode_fence_result(std::span<const std::byte> bytes, int size) {
  Reader r(bytes, fmt::format("fence result ({} bytes)", bytes.size()));
  FenceResult result;
  const auto origin = r.get<uint32_t>("origin");
  if (origin >= static_cast<uint32_t>(size)) r.fail("origin", fmt::format("rank {}", origin));
  result.origin = static_cast<int>(origin);
  result.origin_version = r.get<uint64_t>("origin_version");
  result.departed = read_ranks(r, "departed");
  for (int rank : result.departed)
    if (rank >= size) r.fail("departed", fmt::format("rank {} of {}", rank, size));
  const uint32_t n = r.count("blobs", sizeof(uint64_t));
  if (n != static_cast<uint32_t>(size))
    r.fail("blobs", fmt::format("{} blobs for {} ranks", n, size));
  result.blobs.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    const auto blob = r.bytes("blob");
    result.blobs.emplace_back(blob.begin(), blob.end());
  }
  r.finish();
  return result;
}

}  // namespace grove::runtime
