// Fuzzes the bootstrap's frame reader and payload decoders
// (src/bootstrap/wire.hpp): bytes from a stream are cut into frames and each
// frame is decoded as its type says. Nothing may crash; what is rejected is a
// grove::Error(protocol); and everything accepted re-encodes to the same
// bytes: each frame to the bytes it was cut from, each decoded payload to
// the frame it came from.
//
// Input: byte 0 picks the reader's limit (hello or admitted) and how the
// stream is fed (chunk size); the rest is the stream.

#include <cstdlib>
#include <cstring>

#include "bootstrap/wire.hpp"
#include "grove/error.hpp"

namespace {

using namespace grove::wire;

void require(bool ok) {
  if (!ok) std::abort();  // a round-trip mismatch: libFuzzer saves the input
}

void require_same(const Frame& a, const Frame& b) {
  require(a.type == b.type && a.payload == b.payload);
}

// Decodes `frame` as its type says and checks that it re-encodes exactly.
void decode_and_reencode(const Frame& frame) {
  switch (frame.type) {
    case FrameType::hello:
      require_same(encode(decode_hello(frame)), frame);
      break;
    case FrameType::welcome:
      require_same(encode(decode_welcome(frame)), frame);
      break;
    case FrameType::refuse:
      require_same(encode(decode_refuse(frame)), frame);
      break;
    case FrameType::allgather_request:
    case FrameType::barrier_request:
      require_same(encode(decode_collective_request(frame), frame.type), frame);
      break;
    case FrameType::collective_reply:
      require_same(encode(decode_collective_reply(frame)), frame);
      break;
    case FrameType::collective_error:
      require_same(encode(decode_collective_error(frame)), frame);
      break;
    case FrameType::notice:
      require_same(encode(decode_notice(frame)), frame);
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t control = data[0];
  const auto* stream = reinterpret_cast<const std::byte*>(data + 1);
  const size_t length = size - 1;
  // Small limits keep the fuzzer's memory bounded; both of the launcher's
  // limits are exercised (a stranger's, and an admitted rank's cut down).
  FrameReader reader((control & 1) ? kMaxHelloPayload : 1u << 16);
  const size_t chunk = 1 + (control >> 1);
  size_t fed = 0;
  size_t consumed = 0;  // bytes returned as frames so far
  try {
    while (fed < length) {
      const size_t n = std::min(chunk, length - fed);
      reader.feed(std::span(stream + fed, n));
      fed += n;
      while (auto frame = reader.next()) {
        const std::vector<std::byte> bytes = encode_frame(*frame);
        require(bytes.size() <= fed - consumed);
        require(std::memcmp(bytes.data(), stream + consumed, bytes.size()) == 0);
        consumed += bytes.size();
        try {
          decode_and_reencode(*frame);
        } catch (const grove::Error& e) {
          require(e.code() == grove::Errc::protocol);
        }
      }
      require(reader.buffered() == fed - consumed);
    }
  } catch (const grove::Error& e) {
    require(e.code() == grove::Errc::protocol);
  }
  return 0;
}
