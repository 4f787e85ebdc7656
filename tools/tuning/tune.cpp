#include "tuning/tune.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "grove/error.hpp"
#include "suite/runner.hpp"

namespace grove::tuning {
namespace {

constexpr int kMaxGridRanks = 1 << 20;

int parse_int(std::string_view text, std::string_view whole) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 2 || value > kMaxGridRanks) {
    throw Error(Errc::usage, fmt::format("--ranks '{}': '{}' is not a rank count in 2..{}", whole,
                                         text, kMaxGridRanks));
  }
  return value;
}

}  // namespace

std::vector<int> parse_ranks(std::string_view spec) {
  std::vector<int> out;
  size_t pos = 0;
  while (pos <= spec.size()) {
    const size_t comma = std::min(spec.find(',', pos), spec.size());
    const std::string_view part = spec.substr(pos, comma - pos);
    pos = comma + 1;
    if (part.empty()) throw Error(Errc::usage, fmt::format("--ranks '{}': empty entry", spec));
    if (const size_t dash = part.find('-'); dash != std::string_view::npos) {
      const int a = parse_int(part.substr(0, dash), spec);
      const int b = parse_int(part.substr(dash + 1), spec);
      if (a > b) throw Error(Errc::usage, fmt::format("--ranks '{}': {} > {}", spec, a, b));
      for (int r = a; r <= b; ++r)
        out.push_back(r);
    } else if (const size_t colon = part.find(':'); colon != std::string_view::npos) {
      const int a = parse_int(part.substr(0, colon), spec);
      const int b = parse_int(part.substr(colon + 1), spec);
      if (a > b) throw Error(Errc::usage, fmt::format("--ranks '{}': {} > {}", spec, a, b));
      for (int64_t r = a; r <= b; r *= 2)
        out.push_back(static_cast<int>(r));
    } else {
      out.push_back(parse_int(part, spec));
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Grid make_grid(std::string_view ranks, std::string_view sizes,
               const std::vector<std::string>& collectives) {
  Grid grid;
  grid.ranks = parse_ranks(ranks);
  for (size_t s : bench::parse_sizes(sizes))
    grid.sizes.push_back(s);
  std::sort(grid.sizes.begin(), grid.sizes.end());
  grid.sizes.erase(std::unique(grid.sizes.begin(), grid.sizes.end()), grid.sizes.end());
  const std::vector<std::string> tunable = tunable_collectives();
  for (const std::string& c : collectives) {
    if (std::find(tunable.begin(), tunable.end(), c) == tunable.end()) {
      throw Error(Errc::usage,
                  fmt::format("--coll '{}': not a collective with algorithms to choose from ({})",
                              c, fmt::join(tunable, ", ")));
    }
  }
  for (const std::string& c : tunable) {
    if (collectives.empty() ||
        std::find(collectives.begin(), collectives.end(), c) != collectives.end()) {
      grid.collectives.push_back(c);
    }
  }
  return grid;
}

Tuning tune(const Grid& grid, const coll::PortModel& model) {
  Tuning tuning;
  tuning.grid = grid;
  tuning.shm_priced = static_cast<bool>(model.copy);
  for (const std::string& collective : grid.collectives) {
    // A barrier has no size: one cell per rank count.
    const std::vector<uint64_t> sizes =
        collective == "barrier" ? std::vector<uint64_t>{0} : grid.sizes;
    for (int ranks : grid.ranks) {
      for (uint64_t bytes : sizes) {
        Cell cell{collective, ranks, bytes, rank_candidates(collective, ranks, bytes, model),
                  {},         {}};
        if (cell.ranked.empty()) {
          throw Error(Errc::internal, fmt::format("grove tune: no candidate for {} at {} ranks",
                                                  collective, ranks));
        }
        if (cell.ranked.size() > kKeptCandidates) cell.ranked.resize(kKeptCandidates);
        cell.chosen = cell.ranked.front().spec;
        tuning.cells.push_back(std::move(cell));
      }
    }
  }
  return tuning;
}

std::vector<Cell*> cells_at(Tuning& tuning, const std::string& collective, int ranks) {
  std::vector<Cell*> out;
  for (Cell& c : tuning.cells)
    if (c.collective == collective && c.ranks == ranks) out.push_back(&c);
  return out;
}

}  // namespace grove::tuning
