#include "suite/summary.hpp"

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "grove/error.hpp"
#include "suite/peer_rounds.hpp"

namespace grove::bench {
namespace {

std::string us(double seconds) {
  return fmt::format("{:.2f}", seconds * 1e6);
}

std::string us_ci(const stats::Summary& s) {
  return fmt::format("{} [{}, {}]", us(s.median), us(s.median_ci.lo), us(s.median_ci.hi));
}

// "mean [lo, hi] (min..max)" in µs, or "-" for a cell without per-rank times.
std::string rank_text(const std::optional<RankMean>& m) {
  if (!m) return "-";
  return fmt::format("{} [{}, {}] ({}..{})", us(m->mean), us(m->ci.lo), us(m->ci.hi),
                     us(m->min_rank), us(m->max_rank));
}

std::string rank_ratio_text(const std::optional<Ratio>& r) {
  return r ? format_ratio(*r) : "-";
}

std::string headline_text(const Headline& h) {
  return fmt::format(
      "{} vs {} ({}): at or below 1 in {} of {} cells, geometric mean ratio {:.3f}, worst {:.3f} "
      "({})",
      h.grove_library, h.against, h.metric, h.at_or_below_one, h.cells, h.geometric_mean, h.worst,
      h.worst_cell);
}

// Ratio rows of one grove cell, by peer name.
using RowsByPeer = std::map<std::string, const RatioRow*>;

std::vector<std::pair<const tsv::Cell*, RowsByPeer>> grove_cells_with_rows(
    const RunSummary& run, const std::vector<RatioRow>& rows) {
  std::vector<std::pair<const tsv::Cell*, RowsByPeer>> out;
  for (const tsv::Cell& c : run.cells) {
    if (!is_grove_library(c.library)) continue;
    RowsByPeer by_peer;
    for (const RatioRow& r : rows) {
      if (r.a_library == c.library && r.key == c.key) by_peer[r.b_library] = &r;
    }
    out.emplace_back(&c, std::move(by_peer));
  }
  return out;
}

bool has_peer_numbers(const RunSummary& run) {
  for (const PeerStatus& p : run.peers) {
    if (p.ran) return true;
  }
  return false;
}

void write_file(const std::string& path, const std::string& text, std::string_view what) {
  std::ofstream out(path);
  if (!out) throw Error(Errc::usage, fmt::format("cannot write {} file '{}'", what, path));
  out << text;
  out.flush();
  if (!out) throw Error(Errc::usage, fmt::format("writing {} file '{}' failed", what, path));
}

}  // namespace

std::vector<std::string> RunSummary::peer_names() const {
  std::vector<std::string> names;
  for (const PeerStatus& p : peers)
    names.push_back(p.name);
  return names;
}

std::vector<Headline> headlines(const std::vector<tsv::Cell>& cells,
                                const std::vector<std::string>& peers) {
  const auto rows = compare_with_peers(cells, peers);
  using Key = std::tuple<std::string, std::string, std::string>;
  std::map<Key, Headline> by_key;
  std::vector<Key> order;
  auto add = [&](const std::string& grove, const std::string& against, std::string_view metric,
                 double ratio, const tsv::CellKey& key) {
    if (std::isnan(ratio)) return;
    auto [it, inserted] = by_key.try_emplace({grove, against, std::string(metric)});
    Headline& h = it->second;
    if (inserted) {
      h.grove_library = grove;
      h.against = against;
      h.metric = metric;
      order.emplace_back(grove, against, std::string(metric));
    }
    ++h.cells;
    if (ratio <= 1) ++h.at_or_below_one;
    h.geometric_mean += std::log(ratio);
    if (ratio > h.worst) {
      h.worst = ratio;
      h.worst_cell = key.text();
    }
  };
  for (const RatioRow& r : rows) {
    add(r.a_library, r.b_library, kSpanMetric, r.ratio.value, r.key);
    if (r.rank_ratio) add(r.a_library, r.b_library, kRankMeanMetric, r.rank_ratio->value, r.key);
  }
  // Per cell the faster of the two MPI libraries, when both ran, under each
  // metric on its own (the faster by one metric may be the slower by the
  // other).
  struct Best {
    std::map<std::string, double> span, rank;
  };
  std::map<std::pair<std::string, tsv::CellKey>, Best> mpi;
  for (const RatioRow& r : rows) {
    if (r.b_library != "openmpi" && r.b_library != "mpich") continue;
    Best& best = mpi[{r.a_library, r.key}];
    best.span[r.b_library] = r.b.median;
    if (r.b_rank) best.rank[r.b_library] = r.b_rank->mean;
  }
  const std::string faster = "faster of openmpi and mpich";
  for (const RatioRow& r : rows) {
    if (r.b_library != "openmpi") continue;
    const Best& both = mpi[{r.a_library, r.key}];
    if (both.span.size() == 2) {
      const double best = std::min(both.span.at("openmpi"), both.span.at("mpich"));
      add(r.a_library, faster, kSpanMetric, best > 0 ? r.a.median / best : NAN, r.key);
    }
    if (both.rank.size() == 2 && r.a_rank) {
      const double best = std::min(both.rank.at("openmpi"), both.rank.at("mpich"));
      add(r.a_library, faster, kRankMeanMetric, best > 0 ? r.a_rank->mean / best : NAN, r.key);
    }
  }
  std::vector<Headline> out;
  for (const auto& key : order) {
    Headline h = by_key.at(key);
    h.geometric_mean = std::exp(h.geometric_mean / static_cast<double>(h.cells));
    out.push_back(h);
  }
  return out;
}

std::vector<Slowdown> slowdowns(const std::vector<tsv::Cell>& cells) {
  std::vector<Slowdown> out;
  for (const tsv::Cell& loaded : cells) {
    const std::string_view label = loaded.library;
    if (label.size() <= kLoadedSuffix.size() || !label.ends_with(kLoadedSuffix)) continue;
    const std::string quiet_label(label.substr(0, label.size() - kLoadedSuffix.size()));
    for (const tsv::Cell& quiet : cells) {
      if (quiet.library != quiet_label || quiet.key != loaded.key) continue;
      Slowdown s;
      s.library = quiet_label;
      s.key = loaded.key;
      s.quiet_median = stats::median(quiet.samples);
      s.loaded_median = stats::median(loaded.samples);
      const std::string seed = fmt::format("{} loaded / quiet: {}", quiet_label, loaded.key.text());
      s.span = ratio_of_medians(loaded.samples, quiet.samples, stats::crc32(seed));
      if (tsv::has_rank_times(loaded) && tsv::has_rank_times(quiet))
        s.rank_mean = ratio_of_rank_means(loaded, quiet, stats::crc32("rank mean " + seed));
      out.push_back(std::move(s));
      break;
    }
  }
  return out;
}

namespace {

// The background section: one line per loaded cell, then per grove library
// and peer how often grove's slowdown stays within 2x of the peer's.
std::vector<std::string> background_lines(const RunSummary& run, bool markdown) {
  const auto rows = slowdowns(run.cells);
  std::vector<std::string> lines;
  if (rows.empty()) return lines;
  if (markdown) {
    lines.push_back("### Beside background load (slowdown = loaded / quiet, same run)");
    lines.push_back("");
    lines.push_back(
        "| library | collective | algorithm | ranks | bytes | cadence | quiet µs | loaded µs | "
        "slowdown [95% CI] | per-rank-mean slowdown [95% CI] |");
    lines.push_back("|---|---|---|---:|---:|---|---:|---:|---:|---:|");
  } else {
    lines.push_back(
        "# beside background load: slowdown = loaded / quiet of the same library, "
        "same run");
    lines.push_back(
        fmt::format("{:<12} {:<15} {:<16} {:>5} {:>9} {:<13} {:>10} {:>10} {:>27} {:>27}",
                    "library", "collective", "algorithm", "ranks", "bytes", "cadence", "quiet_us",
                    "loaded_us", "slowdown [95% CI]", "rank_mean slowdown [95% CI]"));
  }
  for (const Slowdown& s : rows) {
    const auto& k = s.key;
    const std::string rank = s.rank_mean ? format_ratio(*s.rank_mean) : "-";
    lines.push_back(
        markdown
            ? fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |", s.library,
                          k.collective, k.algorithm, k.ranks, k.bytes, k.cadence,
                          us(s.quiet_median), us(s.loaded_median), format_ratio(s.span), rank)
            : fmt::format("{:<12} {:<15} {:<16} {:>5} {:>9} {:<13} {:>10} {:>10} {:>27} {:>27}",
                          s.library, k.collective, k.algorithm, k.ranks, k.bytes, k.cadence,
                          us(s.quiet_median), us(s.loaded_median), format_ratio(s.span), rank));
  }
  if (markdown) lines.push_back("");
  // grove's slowdown over each peer's, cell by cell (peers matched without
  // their algorithm, as in the quiet table). A cell over 2 where grove,
  // loaded, is still at or below the peer loaded is counted apart: grove is
  // not the slower one under load there; the peer ran faster loaded than
  // quiet.
  struct Versus {
    size_t cells = 0, within = 0, over_but_faster_loaded = 0;
    double worst = 0;
    std::string where;
  };
  std::map<std::pair<std::string, std::string>, Versus> versus;
  std::vector<std::pair<std::string, std::string>> order;
  for (const Slowdown& g : rows) {
    if (!is_grove_library(g.library)) continue;
    for (const Slowdown& p : rows) {
      if (is_grove_library(p.library) || p.key.collective != g.key.collective ||
          p.key.ranks != g.key.ranks || p.key.bytes != g.key.bytes ||
          p.key.cadence != g.key.cadence || std::isnan(p.span.value) || std::isnan(g.span.value) ||
          p.span.value <= 0) {
        continue;
      }
      auto [it, inserted] = versus.try_emplace({g.library, p.library});
      if (inserted) order.emplace_back(g.library, p.library);
      Versus& v = it->second;
      const double q = g.span.value / p.span.value;
      ++v.cells;
      if (q <= 2) {
        ++v.within;
      } else if (g.loaded_median <= p.loaded_median) {
        ++v.over_but_faster_loaded;
      }
      if (q > v.worst) {
        v.worst = q;
        v.where = g.key.text();
      }
    }
  }
  for (const auto& key : order) {
    const Versus& v = versus.at(key);
    const size_t over = v.cells - v.within;
    const std::string others =
        over == 0 ? ""
                  : fmt::format("; of the other {}, {} with {} loaded at or below {} loaded", over,
                                v.over_but_faster_loaded, key.first, key.second);
    lines.push_back(fmt::format(
        "{}{}'s slowdown over {}'s (span medians): at most 2 in {} of {} cells{}, worst {:.3f} "
        "({})",
        markdown ? "- " : "# ", key.first, key.second, v.within, v.cells, others, v.worst,
        v.where));
  }
  return lines;
}

}  // namespace

void print_summary(std::FILE* out, const RunSummary& run) {
  for (const std::string& line : run.settings)
    fmt::print(out, "# {}\n", line);
  for (const PeerStatus& p : run.peers) {
    fmt::print(out, "# {}: {}{}\n", p.name, p.ran ? "" : "no numbers: ", p.note);
  }
  if (!has_peer_numbers(run)) {
    fmt::print(out, "{:<12} {:<15} {:<20} {:>5} {:>9} {:<13} {:>7} {:>27} {:>11} {:>11} {:>40}\n",
               "library", "collective", "algorithm", "ranks", "bytes", "cadence", "iters",
               "median_us [95% CI]", "p5_us", "p95_us", "rank_mean_us [95% CI] (min..max)");
    for (const SummarizedCell& s : summarize(run.cells)) {
      const tsv::CellKey& k = s.cell.key;
      fmt::print(out, "{:<12} {:<15} {:<20} {:>5} {:>9} {:<13} {:>7} {:>27} {:>11} {:>11} {:>40}\n",
                 s.cell.library, k.collective, k.algorithm, k.ranks, k.bytes, k.cadence,
                 s.summary.count, us_ci(s.summary), us(s.summary.p5), us(s.summary.p95),
                 rank_text(s.rank));
    }
    for (const std::string& line : background_lines(run, false))
      fmt::print(out, "{}\n", line);
    return;
  }
  const auto rows = compare_with_peers(run.cells, run.peer_names());
  std::string head = fmt::format("{:<12} {:<15} {:<16} {:>5} {:>9} {:<13} {:>27} {:>40}", "library",
                                 "collective", "algorithm", "ranks", "bytes", "cadence",
                                 "median_us [95% CI]", "rank_mean_us [95% CI] (min..max)");
  for (const PeerStatus& p : run.peers) {
    if (p.ran)
      head += fmt::format(" | {:>10} {:>27} {:>12} {:>27}", p.name + "_us", "ratio [95% CI]",
                          "rank_mean_us", "rank_mean ratio [95% CI]");
  }
  fmt::print(out, "{}\n", head);
  for (const auto& [cell, by_peer] : grove_cells_with_rows(run, rows)) {
    const tsv::CellKey& k = cell->key;
    const stats::Summary s = stats::summarize(cell->samples, k.text());
    std::string line = fmt::format("{:<12} {:<15} {:<16} {:>5} {:>9} {:<13} {:>27} {:>40}",
                                   cell->library, k.collective, k.algorithm, k.ranks, k.bytes,
                                   k.cadence, us_ci(s), rank_text(rank_mean(*cell)));
    for (const PeerStatus& p : run.peers) {
      if (!p.ran) continue;
      const auto it = by_peer.find(p.name);
      if (it == by_peer.end()) {
        line += fmt::format(" | {:>10} {:>27} {:>12} {:>27}", "-", "-", "-", "-");
        continue;
      }
      const RatioRow& r = *it->second;
      line += fmt::format(" | {:>10} {:>27} {:>12} {:>27}", us(r.b.median), format_ratio(r.ratio),
                          r.b_rank ? us(r.b_rank->mean) : "-", rank_ratio_text(r.rank_ratio));
    }
    fmt::print(out, "{}\n", line);
  }
  for (const Headline& h : headlines(run.cells, run.peer_names()))
    fmt::print(out, "# {}\n", headline_text(h));
  for (const std::string& line : background_lines(run, false))
    fmt::print(out, "{}\n", line);
}

void write_json(const std::string& path, const RunSummary& run) {
  using nlohmann::json;
  json doc;
  doc["settings"] = run.settings;
  doc["method"] =
      "span: time per call = last rank's completion - first rank's start (shared "
      "CLOCK_MONOTONIC), median with 95% percentile-bootstrap CI, 2000 resamples, seed = CRC-32 "
      "of the cell; rank mean (OSU's): each rank's mean time of one call, mean over ranks, min "
      "and max over ranks, 95% percentile-bootstrap CI resampling whole samples, seed = CRC-32 of "
      "'rank mean ' + the cell";
  json peers = json::array();
  for (const PeerStatus& p : run.peers)
    peers.push_back({{"name", p.name}, {"ran", p.ran}, {"note", p.note}});
  doc["peers"] = peers;
  json cells = json::array();
  for (const SummarizedCell& s : summarize(run.cells)) {
    const auto& k = s.cell.key;
    const auto& m = s.summary;
    json rank = nullptr;
    if (s.rank) {
      rank = {{"mean_s", s.rank->mean},
              {"mean_ci_s", {s.rank->ci.lo, s.rank->ci.hi}},
              {"min_rank_s", s.rank->min_rank},
              {"max_rank_s", s.rank->max_rank}};
    }
    cells.push_back({{"library", s.cell.library},
                     {"collective", k.collective},
                     {"algorithm", k.algorithm},
                     {"ranks", k.ranks},
                     {"bytes", k.bytes},
                     {"cadence", k.cadence},
                     {"iterations", m.count},
                     {"min_s", m.min},
                     {"p5_s", m.p5},
                     {"median_s", m.median},
                     {"p95_s", m.p95},
                     {"max_s", m.max},
                     {"median_ci_s", {m.median_ci.lo, m.median_ci.hi}},
                     {"rank_mean", rank}});
  }
  doc["cells"] = cells;
  json ratios = json::array();
  for (const RatioRow& r : compare_with_peers(run.cells, run.peer_names())) {
    ratios.push_back(
        {{"library", r.a_library},
         {"against", r.b_library},
         {"collective", r.key.collective},
         {"algorithm", r.key.algorithm},
         {"ranks", r.key.ranks},
         {"bytes", r.key.bytes},
         {"cadence", r.key.cadence},
         {"ratio", std::isnan(r.ratio.value) ? json(nullptr) : json(r.ratio.value)},
         {"ratio_ci", {r.ratio.ci.lo, r.ratio.ci.hi}},
         {"rank_mean_ratio", r.rank_ratio && !std::isnan(r.rank_ratio->value)
                                 ? json(r.rank_ratio->value)
                                 : json(nullptr)},
         {"rank_mean_ratio_ci",
          r.rank_ratio ? json({r.rank_ratio->ci.lo, r.rank_ratio->ci.hi}) : json(nullptr)}});
  }
  doc["ratios"] = ratios;
  json heads = json::array();
  for (const Headline& h : headlines(run.cells, run.peer_names())) {
    heads.push_back({{"library", h.grove_library},
                     {"against", h.against},
                     {"metric", h.metric},
                     {"cells", h.cells},
                     {"at_or_below_one", h.at_or_below_one},
                     {"geometric_mean_ratio", h.geometric_mean},
                     {"worst_ratio", h.worst},
                     {"worst_cell", h.worst_cell}});
  }
  doc["headlines"] = heads;
  write_file(path, doc.dump(2) + "\n", "JSON");
}

std::string markdown(const RunSummary& run) {
  std::ostringstream md;
  for (const std::string& line : run.settings)
    md << "- " << line << "\n";
  for (const PeerStatus& p : run.peers) {
    md << "- " << p.name << ": " << (p.ran ? "" : "no numbers: ") << p.note << "\n";
  }
  md << "\n";
  if (!has_peer_numbers(run)) {
    md << "| library | collective | algorithm | ranks | bytes | cadence | iterations | median µs "
          "[95% CI] | p5 µs | p95 µs | rank mean µs [95% CI] (min..max) |\n"
          "|---|---|---|---:|---:|---|---:|---:|---:|---:|---:|\n";
    for (const SummarizedCell& s : summarize(run.cells)) {
      const auto& k = s.cell.key;
      md << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                        s.cell.library, k.collective, k.algorithm, k.ranks, k.bytes, k.cadence,
                        s.summary.count, us_ci(s.summary), us(s.summary.p5), us(s.summary.p95),
                        rank_text(s.rank));
    }
    md << "\n";
    for (const std::string& line : background_lines(run, true))
      md << line << "\n";
    return md.str();
  }
  md << "| library | collective | algorithm | ranks | bytes | cadence | median µs [95% CI] | "
        "rank mean µs [95% CI] (min..max) |";
  std::string rule = "|---|---|---|---:|---:|---|---:|---:|";
  for (const PeerStatus& p : run.peers) {
    if (!p.ran) continue;
    md << fmt::format(" {0} µs | ratio [95% CI] | {0} rank mean µs | rank-mean ratio [95% CI] |",
                      p.name);
    rule += "---:|---:|---:|---:|";
  }
  md << "\n" << rule << "\n";
  const auto rows = compare_with_peers(run.cells, run.peer_names());
  for (const auto& [cell, by_peer] : grove_cells_with_rows(run, rows)) {
    const auto& k = cell->key;
    md << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |", cell->library, k.collective,
                      k.algorithm, k.ranks, k.bytes, k.cadence,
                      us_ci(stats::summarize(cell->samples, k.text())),
                      rank_text(rank_mean(*cell)));
    for (const PeerStatus& p : run.peers) {
      if (!p.ran) continue;
      const auto it = by_peer.find(p.name);
      if (it == by_peer.end()) {
        md << " - | - | - | - |";
        continue;
      }
      const RatioRow& r = *it->second;
      md << fmt::format(" {} | {} | {} | {} |", us(r.b.median), format_ratio(r.ratio),
                        r.b_rank ? us(r.b_rank->mean) : "-", rank_ratio_text(r.rank_ratio));
    }
    md << "\n";
  }
  md << "\n";
  for (const Headline& h : headlines(run.cells, run.peer_names())) {
    md << fmt::format(
        "- {} vs {} ({}): at or below 1 in {} of {} cells, geometric mean ratio {:.3f}, worst "
        "{:.3f} (`{}`)\n",
        h.grove_library, h.against, h.metric, h.at_or_below_one, h.cells, h.geometric_mean, h.worst,
        h.worst_cell);
  }
  md << "\n";
  for (const std::string& line : background_lines(run, true))
    md << line << "\n";
  return md.str();
}

void write_markdown(const std::string& path, const RunSummary& run) {
  write_file(path, markdown(run), "Markdown");
}

}  // namespace grove::bench
