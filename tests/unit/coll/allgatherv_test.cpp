#include "coll/allgatherv.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <random>
#include <string>

#include "core/params.hpp"
#include "harness.hpp"

namespace grove::coll {
namespace {

using testing::RankIo;

struct Layout {
  std::vector<size_t> counts;
  std::vector<size_t> offsets;  // empty: packed
  size_t extent = 0;
};

// Packed, or blocks in reverse rank order with 3-byte gaps between them.
Layout make_layout(std::vector<size_t> counts, bool gapped) {
  Layout layout;
  layout.counts = std::move(counts);
  if (!gapped) {
    layout.extent = std::accumulate(layout.counts.begin(), layout.counts.end(), size_t{0});
    return layout;
  }
  layout.offsets.resize(layout.counts.size());
  size_t at = 2;
  for (size_t i = layout.counts.size(); i-- > 0;) {
    layout.offsets[i] = at;
    at += layout.counts[i] + 3;
  }
  layout.extent = at;
  return layout;
}

void check_allgatherv(const std::string& name,
                      const std::function<sched::Schedule(const AllgathervArgs&)>& build, int n,
                      const Layout& layout, bool in_place, uint64_t hash) {
  SCOPED_TRACE(::testing::Message() << name << " N=" << n << " extent=" << layout.extent
                                    << (layout.offsets.empty() ? " packed" : " gapped")
                                    << (in_place ? " in place" : ""));
  auto offset_of = [&](int r) {
    if (layout.offsets.empty())
      return std::accumulate(layout.counts.begin(), layout.counts.begin() + r, size_t{0});
    return layout.offsets[static_cast<size_t>(r)];
  };
  std::vector<std::byte> want(layout.extent, std::byte{0xEE});
  for (int r = 0; r < n; ++r) {
    const auto block = testing::pattern_bytes(r, layout.counts[static_cast<size_t>(r)], 3);
    std::copy(block.begin(), block.end(), want.begin() + static_cast<ptrdiff_t>(offset_of(r)));
  }
  std::vector<RankIo> io(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    RankIo& mine = io[static_cast<size_t>(r)];
    mine.output.assign(layout.extent, std::byte{0xEE});
    const auto block = testing::pattern_bytes(r, layout.counts[static_cast<size_t>(r)], 3);
    if (in_place)
      std::copy(block.begin(), block.end(),
                mine.output.begin() + static_cast<ptrdiff_t>(offset_of(r)));
    else
      mine.input = block;
  }
  const std::string error = testing::run_built(
      n,
      [&](int r) {
        return build(AllgathervArgs{r, n, layout.counts, layout.offsets, in_place, {}});
      },
      io, testing::world_options(hash));
  ASSERT_EQ(error, "");
  for (int r = 0; r < n; ++r) {
    // Gaps keep their 0xEE: nothing writes between blocks.
    ASSERT_EQ(testing::first_difference(io[static_cast<size_t>(r)].output, want), -1)
        << "rank " << r;
  }
}

std::function<sched::Schedule(const AllgathervArgs&)> allgatherv_with(
    const std::string& algorithm) {
  return [algorithm](AllgathervArgs a) {
    a.algorithm = parse_algorithm("allgatherv", algorithm);
    return build_allgatherv(a);
  };
}

TEST(Allgatherv, EveryAlgorithmWithZeroAndUnevenCounts) {
  const std::vector<std::pair<std::string, std::function<sched::Schedule(const AllgathervArgs&)>>>
      algorithms = {
          {"ring", allgatherv_with("ring")},
          {"gather_bcast", allgatherv_with("gather_bcast")},
          {"gather_bcast:2:2",
           [](AllgathervArgs a) {
             params::ScopedSet up("rollup_radix", "2");
             params::ScopedSet down("release_radix", "2");
             a.algorithm = parse_algorithm("allgatherv", "gather_bcast");
             return build_allgatherv(a);
           }},
          {"auto", allgatherv_with("auto")},
      };
  uint64_t hash = 0;
  for (const auto& [name, build] : algorithms) {
    for (int n : {1, 2, 3, 4, 5, 7, 8, 9, 16}) {
      std::mt19937 rng(static_cast<unsigned>(n));
      const auto un = static_cast<size_t>(n);
      std::vector<std::vector<size_t>> count_sets = {
          std::vector<size_t>(un, 0), std::vector<size_t>(un, 1), std::vector<size_t>(un, 0)};
      count_sets[2][un - 1] = 7;  // only the last rank has data
      std::vector<size_t> uneven(un);
      for (size_t i = 0; i < un; ++i)
        uneven[i] = i % 3 == 1 ? 0 : rng() % 300;
      count_sets.push_back(uneven);
      std::vector<size_t> big(un);
      for (size_t i = 0; i < un; ++i)
        big[i] = i % 4 == 2 ? 0 : (size_t{1} << 21) / un + i;
      count_sets.push_back(big);
      for (size_t set = 0; set < count_sets.size(); ++set) {
        const bool big_set = set + 1 == count_sets.size();
        for (int variant = 0; variant < 4; ++variant) {
          // The > 1 MiB set in one layout variant per rank count, rotating.
          if (big_set && variant != n % 4) continue;
          check_allgatherv(name, build, n, make_layout(count_sets[set], variant & 1), variant & 2,
                           hash++);
        }
      }
    }
  }
}

}  // namespace
}  // namespace grove::coll
