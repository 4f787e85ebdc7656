#pragma once
// The wire format between `grove run` and its ranks (the `local` bootstrap).
//
// A frame is a 4-byte little-endian payload length, a 1-byte type, then the
// payload. Both sides decode everything they receive with the functions
// below, which throw grove::Error(Errc::protocol) on malformed input (unknown
// type, a length beyond the reader's limit, a truncated or overlong payload)
// and never read outside the bytes given.
//
// Conversation: the rank sends `hello` (its rank and the job key); the
// launcher answers `welcome` or `refuse` (then closes). While the job runs,
// the rank sends `allgather_request`/`barrier_request` (numbered 1, 2, ... in
// call order) and the launcher answers `collective_reply` or
// `collective_error` with the same number. The launcher pushes `notice`
// frames at any time; it sends every notice of a departure before any reply
// that already excludes that rank.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "grove/error.hpp"

namespace grove::wire {

enum class FrameType : uint8_t {
  hello = 1,
  welcome = 2,
  refuse = 3,
  allgather_request = 4,
  barrier_request = 5,
  collective_reply = 6,
  collective_error = 7,
  notice = 8,
};

std::string_view frame_type_name(FrameType type);

inline constexpr size_t kHeaderSize = 5;
// Largest payload either side accepts once a rank is admitted: an allgather
// reply carries every rank's blob, and blobs are small (transport addresses).
inline constexpr uint32_t kMaxPayload = 256u << 20;
// Before admission only a `hello` may arrive; a stranger gets no more room.
inline constexpr uint32_t kMaxHelloPayload = 256;
inline constexpr size_t kMaxKeyLength = 128;

struct Frame {
  FrameType type = FrameType::hello;
  std::vector<std::byte> payload;
};

// Appends one encoded frame to `out`.
void append_frame(std::vector<std::byte>& out, FrameType type, std::span<const std::byte> payload);
std::vector<std::byte> encode_frame(const Frame& frame);

// Accumulates bytes from a stream and cuts them into frames. A header that
// announces more than `max_payload` bytes or an unknown type is rejected as
// soon as the header is complete, before any payload is buffered.
class FrameReader {
 public:
  explicit FrameReader(uint32_t max_payload = kMaxPayload) : max_payload_(max_payload) {}
  void set_max_payload(uint32_t max_payload) { max_payload_ = max_payload; }
  void feed(std::span<const std::byte> bytes);
  // The next complete frame, if any; throws grove::Error(protocol).
  std::optional<Frame> next();
  // Bytes received but not yet returned as frames.
  size_t buffered() const { return buffer_.size() - consumed_; }

 private:
  std::vector<std::byte> buffer_;
  size_t consumed_ = 0;
  uint32_t max_payload_;
};

// ---- payloads ----

struct Hello {
  int rank = -1;
  std::string key;
};
struct Welcome {
  int rank = -1;
  int size = 0;
};
struct Refuse {
  std::string reason;
};
struct CollectiveRequest {  // allgather_request or barrier_request
  uint64_t seq = 0;
  Blob blob;  // empty for a barrier
};
struct CollectiveReply {
  uint64_t seq = 0;
  // One entry per rank for an allgather (nullopt: the rank departed and is
  // excluded), none for a barrier.
  std::vector<std::optional<Blob>> blobs;
};
struct CollectiveError {
  uint64_t seq = 0;
  Errc code = Errc::peer_failed;  // what the rank throws: peer_failed, timeout, mismatch, ...
  std::string message;
};

Frame encode(const Hello& message);
Frame encode(const Welcome& message);
Frame encode(const Refuse& message);
Frame encode(const CollectiveRequest& message, FrameType type);
Frame encode(const CollectiveReply& message);
Frame encode(const CollectiveError& message);
Frame encode(const FailureNotice& message);

// Each decoder checks the frame's type and that the payload is consumed exactly.
Hello decode_hello(const Frame& frame);
Welcome decode_welcome(const Frame& frame);
Refuse decode_refuse(const Frame& frame);
CollectiveRequest decode_collective_request(const Frame& frame);
CollectiveReply decode_collective_reply(const Frame& frame);
CollectiveError decode_collective_error(const Frame& frame);
FailureNotice decode_notice(const Frame& frame);

}  // namespace grove::wire
