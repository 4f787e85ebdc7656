#include "coll/posting_depth.hpp"

#include "coll/select.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "grove/error.hpp"

namespace grove::coll {
uint32_t auto_posting_depth(uint32_t ranks, uint64_t peer_bytes, uint64_t total_bytes) {
  const uint32_t n = std::max<uint32_t>(ranks, 1);
  const CallFacts facts{.collective = Collective::alltoall,
                        .ranks = static_cast<int>(n),
                        .bytes = peer_bytes,
                        .total = total_bytes,
                        .count = peer_bytes};
  const uint32_t posts = resolve(facts, parse_algorithm("alltoall", "pairwise")).posts;
  return posts == 0 ? n : std::min(posts, n);
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
