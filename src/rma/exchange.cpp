#include "rma/exchange.hpp"

#include <cstring>

#include <fmt/format.h>

namespace grove::rma {

std::vector<int> departed_members(Group& group) {
  std::vector<int> gone;
  for (int m = 0; m < group.size(); ++m) {
    if (m != group.rank() && group.departed(m)) gone.push_back(m);
  }
  return gone;
}

std::string describe_departed(const std::vector<int>& members) {
  std::string list;
  for (size_t i = 0; i < members.size(); ++i)
    list += fmt::format("{}{}", i == 0 ? "" : ", ", members[i]);
  return fmt::format("rank{} {} departed", members.size() == 1 ? "" : "s", list);
}

namespace {

[[noreturn]] void throw_departed(Group& group, std::string_view what,
                                 const std::vector<int>& gone) {
  throw Error(Errc::peer_failed, fmt::format("rank {}: {} over {} ranks: {}", group.rank(), what,
                                             group.size(), describe_departed(gone)));
}

}  // namespace

RegionSet exchange_regions(Group& group, size_t bytes, std::span<const std::byte> header,
                           const HeaderCheck& check, const std::vector<bool>& attach,
                           std::string_view what) {
  if (!group.transport().supports_rma()) {
    throw Error(Errc::transport,
                fmt::format("rank {}: {}: the '{}' transport has no one-sided access", group.rank(),
                            what, group.transport().name()));
  }
  if (const auto gone = departed_members(group); !gone.empty()) throw_departed(group, what, gone);
  RegionSet set;
  set.local = group.transport().rma_allocate(bytes);
  // [u64 header length][header][key]
  const std::span<const std::byte> key = set.local->key();
  std::vector<std::byte> mine(8 + header.size() + key.size());
  const uint64_t header_length = header.size();
  std::memcpy(mine.data(), &header_length, 8);
  if (!header.empty()) std::memcpy(mine.data() + 8, header.data(), header.size());
  std::memcpy(mine.data() + 8 + header.size(), key.data(), key.size());

  std::vector<std::vector<std::byte>> all;
  try {
    all = group.allgather(mine, what);
  } catch (const Error& e) {
    if (const auto gone = departed_members(group); !gone.empty()) throw_departed(group, what, gone);
    throw;
  }
  if (all.size() != static_cast<size_t>(group.size())) {
    throw Error(Errc::internal, fmt::format("rank {}: {}: {} blobs for {} ranks", group.rank(),
                                            what, all.size(), group.size()));
  }
  std::vector<std::span<const std::byte>> headers, keys;
  for (int m = 0; m < group.size(); ++m) {
    const auto& blob = all[static_cast<size_t>(m)];
    uint64_t length = 0;
    if (blob.size() >= 8) std::memcpy(&length, blob.data(), 8);
    if (blob.size() < 8 || length > blob.size() - 8) {
      throw Error(Errc::protocol,
                  fmt::format("rank {}: {}: rank {} published {} bytes, not a header and a key",
                              group.rank(), what, m, blob.size()));
    }
    headers.emplace_back(blob.data() + 8, length);
    keys.emplace_back(blob.data() + 8 + length, blob.size() - 8 - length);
  }
  check(headers);
  set.targets.resize(static_cast<size_t>(group.size()));
  for (int m = 0; m < group.size(); ++m) {
    if (!attach.empty() && !attach[static_cast<size_t>(m)]) continue;
    set.targets[static_cast<size_t>(m)] =
        group.transport().rma_attach(m, keys[static_cast<size_t>(m)]);
  }
  return set;
}

}  // namespace grove::rma
