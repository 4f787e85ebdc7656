// The rows of a tuning (tune.hpp) and the file that holds them.

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "grove/error.hpp"
#include "tuning/tune.hpp"

namespace grove::tuning {
namespace {

using Json = nlohmann::ordered_json;

struct PlannedRow {
  coll::SelectRow row;
  std::vector<std::string> comments;
};

struct Planned {
  coll::Collective collective;
  std::vector<PlannedRow> rows;
};

std::string size_text(uint64_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  if (bytes >= 1024 && bytes % 1024 == 0) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} B", bytes);
}

// A run of cells at one rank count with one choice.
struct Span {
  size_t first = 0, last = 0;  // cell indices into the rank count's list
  coll::AlgorithmSpec spec;
};

bool runs_a_schedule(const Cell& cell, const coll::AlgorithmSpec& spec) {
  return coll::algorithm_info(cell.collective, spec.name).schedule;
}

// The cell's choice; with `schedule_only`, where that is the shared-memory
// engine, the model's fastest schedule algorithm instead (what runs a call
// the engine cannot take: across hosts, non-blocking, beyond its slots).
const coll::AlgorithmSpec& choice_of(const Cell& cell, bool schedule_only) {
  if (!schedule_only || runs_a_schedule(cell, cell.chosen)) return cell.chosen;
  for (const Candidate& c : cell.ranked)
    if (runs_a_schedule(cell, c.spec)) return c.spec;
  return cell.chosen;
}

std::vector<Span> spans_of(const std::vector<const Cell*>& cells, bool schedule_only) {
  std::vector<Span> out;
  for (size_t i = 0; i < cells.size(); ++i) {
    const coll::AlgorithmSpec& spec = choice_of(*cells[i], schedule_only);
    if (!out.empty() && out.back().spec == spec) {
      out.back().last = i;
    } else {
      out.push_back({i, i, spec});
    }
  }
  return out;
}

bool same_spans(const std::vector<Span>& a, const std::vector<Span>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].first != b[i].first || a[i].last != b[i].last || !(a[i].spec == b[i].spec))
      return false;
  return true;
}

// One comment line per rank count: the row's cells there.
std::string describe_cells(const std::vector<const Cell*>& cells, const Span& span) {
  const Cell& first = *cells[span.first];
  const Cell& last = *cells[span.last];
  std::string out = fmt::format("N={}: ", first.ranks);
  if (first.collective == "barrier") {
    out += fmt::format("{:.3f} us", first.ranked.front().predicted_us);
  } else if (span.first == span.last) {
    out += fmt::format("{} {:.3f} us", size_text(first.bytes), first.ranked.front().predicted_us);
  } else {
    out += fmt::format("{} {:.3f} us .. {} {:.3f} us", size_text(first.bytes),
                       first.ranked.front().predicted_us, size_text(last.bytes),
                       last.ranked.front().predicted_us);
  }
  // The closest runner-up over the span (model choices only).
  double margin = -1;
  const Cell* at = nullptr;
  for (size_t i = span.first; i <= span.last; ++i) {
    const Cell& c = *cells[i];
    if (c.ranked.size() < 2 || c.ranked[0].predicted_us <= 0) continue;
    const double m = c.ranked[1].predicted_us / c.ranked[0].predicted_us - 1;
    if (margin < 0 || m < margin) {
      margin = m;
      at = &c;
    }
  }
  if (at != nullptr) {
    out += fmt::format("; runner-up {} +{:.1f}%{}", at->ranked[1].spec.to_string(), 100 * margin,
                       span.first == span.last || at->collective == "barrier"
                           ? ""
                           : fmt::format(" at {}", size_text(at->bytes)));
  }
  for (size_t i = span.first; i <= span.last; ++i) {
    const Cell& c = *cells[i];
    if (c.measured.empty()) continue;
    out += fmt::format("; measured at {}:", size_text(c.bytes));
    for (const Measurement& m : c.measured) {
      out += fmt::format(" {} {:.3f} us (model #{} {:.3f} us)", m.spec.to_string(), m.median_us,
                         m.model_rank, m.predicted_us);
    }
  }
  return out;
}

coll::Range intersect(const coll::Range& a, const coll::Range& b) {
  return {std::max(a.min, b.min), std::min(a.max, b.max)};
}

// The built-in rows of `spec`'s algorithm within `row`'s ranges, in the
// built-in order: their posting depths, unchanged inside the range.
std::vector<coll::SelectRow> posting_rows(coll::Collective collective, const coll::SelectRow& row) {
  std::vector<coll::SelectRow> out;
  for (const coll::SelectRow& b : coll::builtin_select_table().rows_of(collective)) {
    if (b.algorithm.name != row.algorithm.name) continue;
    coll::SelectRow r = b;
    r.ranks = intersect(b.ranks, row.ranks);
    r.bytes = intersect(b.bytes, row.bytes);
    if (r.ranks.min > r.ranks.max || r.bytes.min > r.bytes.max) continue;
    r.note = "grove tune's choice, with the built-in posting depth: " + b.note;
    out.push_back(r);
  }
  if (out.empty()) out.push_back(row);
  return out;
}

// Rows for one collective's cells (by rank count of the grid), merging rank
// counts whose spans agree; `schedule_only` as choice_of.
void emit_rows(Planned& planned, const Grid& grid,
               const std::vector<std::vector<const Cell*>>& by_ranks, bool schedule_only) {
  const std::string name(coll::collective_name(planned.collective));
  size_t i = 0;
  while (i < grid.ranks.size()) {
    const std::vector<Span> spans = spans_of(by_ranks[i], schedule_only);
    size_t j = i;
    while (j + 1 < grid.ranks.size() && same_spans(spans, spans_of(by_ranks[j + 1], schedule_only)))
      ++j;
    for (const Span& span : spans) {
      const std::vector<const Cell*>& cells = by_ranks[i];
      // The second pass repeats only the ranges the engine won.
      if (schedule_only &&
          std::all_of(cells.begin() + static_cast<ptrdiff_t>(span.first),
                      cells.begin() + static_cast<ptrdiff_t>(span.last + 1),
                      [](const Cell* c) { return runs_a_schedule(*c, c->chosen); }))
        continue;
      coll::SelectRow row;
      row.ranks = {
          static_cast<uint64_t>(grid.ranks[i]),
          j + 1 < grid.ranks.size() ? static_cast<uint64_t>(grid.ranks[j + 1] - 1) : UINT64_MAX};
      if (name != "barrier") {
        row.bytes.min = span.first == 0 ? 0 : cells[span.first]->bytes;
        row.bytes.max = span.last + 1 < cells.size() ? cells[span.last + 1]->bytes - 1 : UINT64_MAX;
      }
      row.algorithm = span.spec;
      const bool verified = std::any_of(cells.begin() + static_cast<ptrdiff_t>(span.first),
                                        cells.begin() + static_cast<ptrdiff_t>(span.last + 1),
                                        [](const Cell* c) { return !c->measured.empty(); });
      row.note = schedule_only
                     ? "grove tune: the model's fastest schedule, for calls shm cannot take"
                 : verified ? "grove tune: the measured best of the model's top candidates"
                            : "grove tune: the model's fastest";
      std::vector<std::string> comments;
      if (!schedule_only) {
        for (size_t k = i; k <= j; ++k)
          comments.push_back(describe_cells(by_ranks[k], span));
      }
      const coll::AlgorithmInfo& info = coll::algorithm_info(name, span.spec.name);
      if (info.takes_posts && span.spec.posts == 0) {
        bool first = true;
        for (coll::SelectRow& r : posting_rows(planned.collective, row)) {
          planned.rows.push_back({r, first ? comments : std::vector<std::string>{}});
          first = false;
        }
      } else {
        planned.rows.push_back({row, comments});
      }
    }
    i = j + 1;
  }
}

std::vector<Planned> plan(const Tuning& tuning) {
  std::vector<Planned> out;
  const Grid& grid = tuning.grid;
  for (const std::string& name : grid.collectives) {
    const coll::Collective collective = *coll::collective_named(name);
    Planned planned{collective, {}};
    // The built-in rows before the first schedule algorithm with a closed
    // form (shm, hier) stay first: the closed forms have nothing to say about
    // hier, and a tuning file's rows come before every built-in one. shm is
    // the model's to place when the table priced it (host terms).
    for (const coll::SelectRow& b : coll::builtin_select_table().rows_of(collective)) {
      const coll::AlgorithmInfo& info = coll::algorithm_info(name, b.algorithm.name);
      if (info.cost.cost && info.schedule) break;
      if (b.algorithm.name == "shm" && tuning.shm_priced) continue;
      planned.rows.push_back(
          {b,
           {b.algorithm.name == "shm"
                ? "not modelled: the shared-memory engine, for blocking calls that fit "
                  "(docs/shm.md)"
                : "not modelled: kept from the built-in table (docs/selection.md)"}});
    }
    // Cells per rank count, and their spans.
    std::vector<std::vector<const Cell*>> by_ranks(grid.ranks.size());
    for (const Cell& c : tuning.cells) {
      if (c.collective != name) continue;
      const auto at = std::find(grid.ranks.begin(), grid.ranks.end(), c.ranks) - grid.ranks.begin();
      by_ranks[static_cast<size_t>(at)].push_back(&c);
    }
    // Rows of the model's choices; then, when some choice is the shared-memory
    // engine, the same ranges with the fastest schedule algorithm, which a
    // call the engine cannot take falls through to.
    const bool some_shm = std::any_of(tuning.cells.begin(), tuning.cells.end(), [&](const Cell& c) {
      return c.collective == name && !runs_a_schedule(c, c.chosen);
    });
    for (const bool schedule_only : {false, true}) {
      if (schedule_only && !some_shm) break;
      emit_rows(planned, grid, by_ranks, schedule_only);
    }
    out.push_back(std::move(planned));
  }
  return out;
}

Json row_json(const coll::SelectRow& row) {
  Json j;
  auto range = [&](const coll::Range& r, const char* min_key, const char* max_key) {
    if (r.min != 0) j[min_key] = r.min;
    if (r.max != UINT64_MAX) j[max_key] = r.max;
  };
  range(row.ranks, "min_ranks", "max_ranks");
  range(row.bytes, "min_bytes", "max_bytes");
  range(row.total, "min_total", "max_total");
  range(row.ranks_per_node, "min_ranks_per_node", "max_ranks_per_node");
  range(row.hosts, "min_hosts", "max_hosts");
  if (row.pow2_ranks) j["pow2_ranks"] = true;
  if (row.count_below_pof2) j["count_below_pof2"] = true;
  j["algorithm"] = row.algorithm.to_string();
  if (!row.note.empty()) j["note"] = row.note;
  return j;
}

}  // namespace

coll::SelectTable to_table(const Tuning& tuning) {
  coll::SelectTable table;
  table.source = "grove tune";
  table.plogp = tuning.plogp;
  for (const Planned& p : plan(tuning)) {
    coll::SelectTable::Rows rows{p.collective, {}};
    for (const PlannedRow& r : p.rows)
      rows.rows.push_back(r.row);
    table.collectives.push_back(std::move(rows));
  }
  return table;
}

std::string tuning_file_text(const Tuning& tuning) {
  const Grid& grid = tuning.grid;
  std::string out;
  out += "// grove tune: per collective, ranks and size, the algorithm its closed form\n";
  out += "// (docs/models.md) predicts fastest; each row holds from its grid point up to the\n";
  out += "// next (docs/tuning.md). Predicted times in microseconds.\n";
  out += fmt::format("// model: {}\n", tuning.model);
  out +=
      fmt::format("// grid: ranks {}; sizes {} .. {} ({} points)\n", fmt::join(grid.ranks, ","),
                  size_text(grid.sizes.front()), size_text(grid.sizes.back()), grid.sizes.size());
  if (!tuning.command.empty()) out += fmt::format("// made by: {}\n", tuning.command);
  out += "{\n  \"format\": \"grove-selection/1\",\n";
  out += fmt::format("  \"note\": {}", Json("grove tune: " + tuning.model).dump());
  if (!tuning.plogp.empty()) out += fmt::format(",\n  \"plogp\": {}", Json(tuning.plogp).dump());
  for (const Planned& p : plan(tuning)) {
    out += fmt::format(",\n  \"{}\": [", coll::collective_name(p.collective));
    const char* separator = "\n";
    for (const PlannedRow& r : p.rows) {
      out += separator;
      for (const std::string& c : r.comments)
        out += "    // " + c + "\n";
      out += "    " + row_json(r.row).dump();
      separator = ",\n";
    }
    out += "\n  ]";
  }
  out += "\n}\n";
  return out;
}

}  // namespace grove::tuning
