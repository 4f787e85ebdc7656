#include "coll/posting_depth.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "grove/error.hpp"

namespace grove::coll {
namespace {

// The seed's thresholds. 66000 is the aggregate size below which the older
// UCC selector already posted everything; it is kept as is.
constexpr uint64_t kSmallTotalBytes = 66000;
constexpr uint32_t kSmallTeam = 8;
constexpr uint64_t KiB = 1024;
constexpr uint64_t MiB = 1024 * KiB;

}  // namespace

uint32_t auto_posting_depth(uint32_t ranks, uint64_t peer_bytes, uint64_t total_bytes) {
  const uint32_t n = std::max<uint32_t>(ranks, 1);
  if (total_bytes <= kSmallTotalBytes || n <= kSmallTeam) return n;
  if (peer_bytes <= 64 * KiB) return std::min<uint32_t>(n, 32);
  if (peer_bytes <= 1 * MiB) return std::min<uint32_t>(n, 16);
  if (peer_bytes <= 4 * MiB) return n <= 16 ? n : 8;
  if (peer_bytes <= 8 * MiB) return std::min<uint32_t>(n, 4);
  return n <= 32 ? 4 : 1;
}

std::optional<uint32_t> parse_posting_depth(std::string_view setting, std::string_view param_name) {
  if (setting == "auto") return std::nullopt;
  uint32_t value = 0;
  const char* end = setting.data() + setting.size();
  const auto [ptr, ec] = std::from_chars(setting.data(), end, value);
  if (setting.empty() || ec != std::errc() || ptr != end || value < 1) {
    throw Error(Errc::invalid_parameter,
                fmt::format("{} = '{}': expected 'auto' or a posting depth of at least 1",
                            param_name, setting));
  }
  return value;
}

uint32_t resolve_posting_depth(std::optional<uint32_t> setting, uint32_t ranks, uint64_t peer_bytes,
                               uint64_t total_bytes) {
  const uint32_t n = std::max<uint32_t>(ranks, 1);
  if (setting) return std::min(*setting, n);
  return auto_posting_depth(n, peer_bytes, total_bytes);
}

}  // namespace grove::coll
