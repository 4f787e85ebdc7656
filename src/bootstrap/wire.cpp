#include "bootstrap/wire.hpp"

#include <limits>

#include <fmt/format.h>

#include "grove/error.hpp"

namespace grove::wire {
namespace {

// Ranks are 31-bit on the wire as everywhere else in grove; a job never has
// more ranks than this, so larger counts are malformed rather than large.
constexpr uint32_t kMaxRanks = 1u << 24;

bool known_type(uint8_t type) {
  return type >= static_cast<uint8_t>(FrameType::hello) &&
         type <= static_cast<uint8_t>(FrameType::notice);
}

class Writer {
 public:
  void u8(uint8_t v) { out_.push_back(static_cast<std::byte>(v)); }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i)
      u8(static_cast<uint8_t>(v >> (8 * i)));
  }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i)
      u8(static_cast<uint8_t>(v >> (8 * i)));
  }
  void bytes(std::span<const std::byte> b) { out_.insert(out_.end(), b.begin(), b.end()); }
  void sized_bytes(std::span<const std::byte> b) {
    if (b.size() > std::numeric_limits<uint32_t>::max()) {
      throw Error(Errc::invalid_argument,
                  fmt::format("bootstrap: a blob of {} bytes is too large for a frame", b.size()));
    }
    u32(static_cast<uint32_t>(b.size()));
    bytes(b);
  }
  void string(std::string_view s) { sized_bytes(std::as_bytes(std::span(s.data(), s.size()))); }
  std::vector<std::byte> take() { return std::move(out_); }

 private:
  std::vector<std::byte> out_;
};

// Reads a payload front to back; every read checks the remaining length.
class Reader {
 public:
  Reader(const Frame& frame, FrameType expected) : frame_(frame) {
    if (frame.type != expected) {
      throw Error(Errc::protocol,
                  fmt::format("bootstrap: expected a {} frame, got {}", frame_type_name(expected),
                              frame_type_name(frame.type)));
    }
  }
  uint8_t u8() { return static_cast<uint8_t>(take(1)[0]); }
  uint32_t u32() {
    auto b = take(4);
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i)
      v |= static_cast<uint32_t>(b[i]) << (8 * i);
    return v;
  }
  uint64_t u64() {
    auto b = take(8);
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
      v |= static_cast<uint64_t>(b[i]) << (8 * i);
    return v;
  }
  int rank(std::string_view field) {
    const uint32_t v = u32();
    if (v >= kMaxRanks) fail(fmt::format("{} {} is out of range", field, v));
    return static_cast<int>(v);
  }
  Blob sized_bytes() {
    const uint32_t n = u32();
    auto b = take(n);
    return Blob(b.begin(), b.end());
  }
  std::string string() {
    const uint32_t n = u32();
    auto b = take(n);
    return std::string(reinterpret_cast<const char*>(b.data()), b.size());
  }
  Blob rest() {
    auto b = take(remaining());
    return Blob(b.begin(), b.end());
  }
  size_t remaining() const { return frame_.payload.size() - offset_; }
  void finish() {
    if (remaining() != 0) fail(fmt::format("{} unexpected trailing bytes", remaining()));
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(Errc::protocol, fmt::format("bootstrap: malformed {} frame: {}",
                                            frame_type_name(frame_.type), what));
  }

 private:
  std::span<const std::byte> take(size_t n) {
    if (n > remaining()) {
      fail(fmt::format("needs {} more bytes at offset {}, has {}", n, offset_, remaining()));
    }
    auto out = std::span(frame_.payload).subspan(offset_, n);
    offset_ += n;
    return out;
  }
  const Frame& frame_;
  size_t offset_ = 0;
};

}  // namespace

std::string_view frame_type_name(FrameType type) {
  switch (type) {
    case FrameType::hello:
      return "hello";
    case FrameType::welcome:
      return "welcome";
    case FrameType::refuse:
      return "refuse";
    case FrameType::allgather_request:
      return "allgather_request";
    case FrameType::barrier_request:
      return "barrier_request";
    case FrameType::collective_reply:
      return "collective_reply";
    case FrameType::collective_error:
      return "collective_error";
    case FrameType::notice:
      return "notice";
  }
  return "unknown";
}

void append_frame(std::vector<std::byte>& out, FrameType type, std::span<const std::byte> payload) {
  if (payload.size() > kMaxPayload) {
    throw Error(Errc::invalid_argument,
                fmt::format("bootstrap: a {} frame of {} bytes exceeds the limit of {} bytes",
                            frame_type_name(type), payload.size(), kMaxPayload));
  }
  const auto length = static_cast<uint32_t>(payload.size());
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<std::byte>(length >> (8 * i)));
  out.push_back(static_cast<std::byte>(type));
  out.insert(out.end(), payload.begin(), payload.end());
}

std::vector<std::byte> encode_frame(const Frame& frame) {
  std::vector<std::byte> out;
  out.reserve(kHeaderSize + frame.payload.size());
  append_frame(out, frame.type, frame.payload);
  return out;
}

void FrameReader::feed(std::span<const std::byte> bytes) {
  // Compact lazily so a stream of small frames does not shift the buffer each time.
  if (consumed_ > 0 && consumed_ >= buffer_.size() / 2) {
    buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(consumed_));
    consumed_ = 0;
  }
  buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
}

std::optional<Frame> FrameReader::next() {
  if (buffered() < kHeaderSize) return std::nullopt;
  const std::byte* head = buffer_.data() + consumed_;
  uint32_t length = 0;
  for (int i = 0; i < 4; ++i)
    length |= static_cast<uint32_t>(head[i]) << (8 * i);
  const auto type = static_cast<uint8_t>(head[4]);
  if (!known_type(type)) {
    throw Error(Errc::protocol, fmt::format("bootstrap: unknown frame type {}", type));
  }
  if (length > max_payload_) {
    throw Error(Errc::protocol,
                fmt::format("bootstrap: {} frame announces {} bytes, more than the limit of {}",
                            frame_type_name(static_cast<FrameType>(type)), length, max_payload_));
  }
  if (buffered() - kHeaderSize < length) return std::nullopt;
  Frame frame;
  frame.type = static_cast<FrameType>(type);
  frame.payload.assign(head + kHeaderSize, head + kHeaderSize + length);
  consumed_ += kHeaderSize + length;
  if (consumed_ == buffer_.size()) {
    buffer_.clear();
    consumed_ = 0;
  }
  return frame;
}

// ---- payloads ----

Frame encode(const Hello& message) {
  Writer w;
  w.u32(static_cast<uint32_t>(message.rank));
  w.string(message.key);
  return {FrameType::hello, w.take()};
}

Frame encode(const Welcome& message) {
  Writer w;
  w.u32(static_cast<uint32_t>(message.rank));
  w.u32(static_cast<uint32_t>(message.size));
  return {FrameType::welcome, w.take()};
}

Frame encode(const Refuse& message) {
  Writer w;
  w.string(message.reason);
  return {FrameType::refuse, w.take()};
}

Frame encode(const CollectiveRequest& message, FrameType type) {
  if (type != FrameType::allgather_request && type != FrameType::barrier_request) {
    throw Error(Errc::internal, "bootstrap: a collective request must be allgather or barrier");
  }
  Writer w;
  w.u64(message.seq);
  if (type == FrameType::allgather_request) w.bytes(message.blob);
  return {type, w.take()};
}

Frame encode(const CollectiveReply& message) {
  Writer w;
  w.u64(message.seq);
  w.u32(static_cast<uint32_t>(message.blobs.size()));
  for (const auto& blob : message.blobs) {
    w.u8(blob ? 1 : 0);
    if (blob) w.sized_bytes(*blob);
  }
  return {FrameType::collective_reply, w.take()};
}

Frame encode(const CollectiveError& message) {
  Writer w;
  w.u64(message.seq);
  w.u8(static_cast<uint8_t>(message.code));
  w.string(message.message);
  return {FrameType::collective_error, w.take()};
}

Frame encode(const FailureNotice& message) {
  Writer w;
  w.u32(static_cast<uint32_t>(message.rank));
  w.u64(message.version);
  w.string(message.how);
  return {FrameType::notice, w.take()};
}

Hello decode_hello(const Frame& frame) {
  Reader r(frame, FrameType::hello);
  Hello out;
  out.rank = r.rank("rank");
  out.key = r.string();
  if (out.key.size() > kMaxKeyLength) r.fail("job key too long");
  r.finish();
  return out;
}

Welcome decode_welcome(const Frame& frame) {
  Reader r(frame, FrameType::welcome);
  Welcome out;
  out.rank = r.rank("rank");
  out.size = r.rank("size");
  if (out.size < 1 || out.rank >= out.size) {
    r.fail(fmt::format("rank {} is not below size {}", out.rank, out.size));
  }
  r.finish();
  return out;
}

Refuse decode_refuse(const Frame& frame) {
  Reader r(frame, FrameType::refuse);
  Refuse out{r.string()};
  r.finish();
  return out;
}

CollectiveRequest decode_collective_request(const Frame& frame) {
  if (frame.type == FrameType::barrier_request) {
    Reader r(frame, FrameType::barrier_request);
    CollectiveRequest out{r.u64(), {}};
    r.finish();
    return out;
  }
  Reader r(frame, FrameType::allgather_request);
  CollectiveRequest out;
  out.seq = r.u64();
  out.blob = r.rest();
  return out;
}

CollectiveReply decode_collective_reply(const Frame& frame) {
  Reader r(frame, FrameType::collective_reply);
  CollectiveReply out;
  out.seq = r.u64();
  const uint32_t count = r.u32();
  // Each entry takes at least one byte: bound the count before reserving.
  if (count > kMaxRanks || count > r.remaining()) {
    r.fail(fmt::format("{} entries cannot fit in {} bytes", count, r.remaining()));
  }
  out.blobs.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    const uint8_t present = r.u8();
    if (present > 1) r.fail(fmt::format("entry {} has presence flag {}", i, present));
    if (present)
      out.blobs.emplace_back(r.sized_bytes());
    else
      out.blobs.emplace_back(std::nullopt);
  }
  r.finish();
  return out;
}

CollectiveError decode_collective_error(const Frame& frame) {
  Reader r(frame, FrameType::collective_error);
  CollectiveError out;
  out.seq = r.u64();
  const uint8_t code = r.u8();
  out.code = static_cast<Errc>(code);
  // errc_name knows every code, so this stays right when codes are added.
  if (errc_name(out.code) == "unknown error") r.fail(fmt::format("unknown error code {}", code));
  out.message = r.string();
  r.finish();
  return out;
}

FailureNotice decode_notice(const Frame& frame) {
  Reader r(frame, FrameType::notice);
  FailureNotice out;
  out.rank = r.rank("departed rank");
  out.version = r.u64();
  out.how = r.string();
  if (out.version == 0) r.fail("version 0 (versions start at 1)");
  r.finish();
  return out;
}

}  // namespace grove::wire
