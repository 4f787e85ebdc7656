// Fuzzes the fence's message and result decoders (src/runtime/fence_wire.hpp):
// bytes from another rank must never crash a decoder; what is rejected is a
// grove::Error(protocol); what is accepted re-encodes to the same bytes.
//
// Input: byte 0 picks the decoder (even: a message, odd: a result for a
// communicator of 1 + byte 1 ranks); the rest is the encoded bytes.

#include <cstdlib>

#include "grove/error.hpp"
#include "runtime/fence_wire.hpp"

namespace {

void require(bool ok) {
  if (!ok) std::abort();  // a round-trip mismatch: libFuzzer saves the input
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const bool result = (data[0] & 1) != 0;
  const int ranks = 1 + data[1];
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data + 2), size - 2);
  try {
    if (result) {
      const grove::runtime::FenceResult decoded = grove::runtime::decode_fence_result(bytes, ranks);
      const grove::Blob again = grove::runtime::encode_fence_result(decoded);
      require(std::equal(again.begin(), again.end(), bytes.begin(), bytes.end()));
    } else {
      const grove::runtime::FenceMessage decoded = grove::runtime::decode_fence_message(bytes, 1);
      const grove::Blob again = grove::runtime::encode_fence_message(decoded);
      require(std::equal(again.begin(), again.end(), bytes.begin(), bytes.end()));
    }
  } catch (const grove::Error& e) {
    require(e.code() == grove::Errc::protocol);
  }
  return 0;
}
