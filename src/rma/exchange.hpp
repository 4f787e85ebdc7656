#pragma once
// The collective set-up shared by windows and rings: every member allocates
// its region, publishes a header (what it believes the object is) with the
// region's key, checks that every member's header agrees, and attaches the
// regions it will access.

#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "rma/group.hpp"

namespace grove::rma {

struct RegionSet {
  std::unique_ptr<RmaRegion> local;
  // By member; null for a member this rank does not access.
  std::vector<std::unique_ptr<RmaTarget>> targets;
};

// Throws grove::Error naming the first member whose header differs and how;
// called on every member with the same headers, so every member throws alike.
using HeaderCheck = std::function<void(const std::vector<std::span<const std::byte>>& headers)>;

// Collective over `group`. `attach[m]` says whether to attach member m
// (empty: every member). A member that departed before or during the
// exchange is named in a grove::Error(peer_failed); `what` names the object
// in errors ("window(int32 x 16)").
RegionSet exchange_regions(Group& group, size_t bytes, std::span<const std::byte> header,
                           const HeaderCheck& check, const std::vector<bool>& attach,
                           std::string_view what);

}  // namespace grove::rma
