#include "tuning/report.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "grove/error.hpp"

#include "coll/select.hpp"
#include "core/stats.hpp"
#include "suite/tsv.hpp"
#include "tuning/candidates.hpp"
#include "tuning/explain.hpp"

namespace grove::tuning {
namespace {

constexpr double kFidelityBand = 0.20;

struct Measured {
  std::string algorithm;  // as benchmarked ("pipeline", "knomial:4", "auto", "shm")
  double median_us = 0;
  std::string key;  // the cell's key text, as its calibration names it
};

// (collective, ranks, bytes) -> every algorithm measured there.
using Cells = std::map<std::tuple<std::string, int, uint64_t>, std::vector<Measured>>;

Cells read_cells(const std::vector<std::string>& paths) {
  std::vector<bench::tsv::Row> rows;
  for (const std::string& p : paths) {
    std::vector<bench::tsv::Row> more = bench::tsv::read_file(p);
    rows.insert(rows.end(), more.begin(), more.end());
  }
  Cells cells;
  for (const bench::tsv::Cell& c : bench::tsv::group(rows)) {
    if (c.library != "grove" || c.samples.empty()) continue;
    if (c.key.algorithm.find('/') != std::string::npos) continue;  // side rows
    const stats::Summary s = stats::summarize(c.samples, c.key.text());
    cells[{c.key.collective, c.key.ranks, c.key.bytes}].push_back(
        {c.key.algorithm, s.median * 1e6, c.key.text()});
  }
  return cells;
}

// The spec the bench ran for `text` at this cell (open arguments completed
// as the call completes them), or nullopt when not modelled.
std::optional<coll::AlgorithmSpec> modelled_spec(const std::string& collective, int ranks,
                                                 uint64_t bytes, const std::string& text) {
  if (text == "auto") return std::nullopt;
  const coll::AlgorithmSpec parsed = coll::parse_algorithm(collective, text);
  if (!coll::algorithm_info(collective, parsed.name).cost.cost) return std::nullopt;
  return coll::resolve(call_facts({collective, ranks, bytes, true}), parsed);
}

std::string ratio_text(double r) {
  const std::string t = fmt::format("{:.2f}", r);
  return std::abs(r - 1) <= kFidelityBand ? t : "**" + t + "**";
}

std::string choice_of_auto(const std::string& collective, int ranks, uint64_t bytes,
                           int ranks_per_host) {
  const ExplainCall call{collective, ranks, bytes, true};
  return explain(call, context_from_params(ranks, ranks_per_host), nullptr, "")
      .choice.spec.to_string();
}

struct Regret {
  double log_sum = 0;
  int n = 0;
  double worst = 0;
  std::string worst_cell;
  void add(double ratio, const std::string& cell) {
    log_sum += std::log(ratio);
    ++n;
    if (ratio > worst) {
      worst = ratio;
      worst_cell = cell;
    }
  }
  std::string text() const {
    if (n == 0) return "no cells";
    return fmt::format("geometric mean {:+.1f}% over {} cells; worst {:+.1f}%: {}",
                       100 * (std::exp(log_sum / n) - 1), n, 100 * (worst - 1), worst_cell);
  }
};

// The model's fastest schedule algorithm: Open MPI's rule chooses among
// message-passing algorithms, so the shared-memory engine is left out.
Candidate first_schedule(const std::vector<Candidate>& ranked) {
  for (const Candidate& c : ranked)
    if (coll::algorithm_info(c.spec.collective, c.spec.name).schedule) return c;
  throw Error(Errc::internal, "no schedule algorithm among the candidates");
}

}  // namespace

std::string openmpi_scatter_rule(int n, uint64_t b) {
  // Algorithm 2 is binomial; 1 (basic_linear) and 3 (linear_nb) send every
  // block from the root.
  auto binomial_if = [](bool yes) { return yes ? "binomial" : "flat"; };
  if (n < 4) return "flat";
  if (n < 8) return binomial_if(b < 2048 || (b >= 4096 && b < 8192));
  if (n < 16) return binomial_if(b < 16384);
  if (n < 32) return binomial_if(b < 16384);
  if (n < 64) return binomial_if(b < 512 || (b >= 8192 && b < 16384));
  return binomial_if(b < 512);
}

std::string report_markdown(const std::vector<std::string>& tsv_paths,
                            const std::vector<ModelSource>& models,
                            const StateCorrection* correction, int ranks_per_host) {
  if (models.empty()) throw Error(Errc::usage, "grove tune --report: no pLogP table");
  const size_t tables = correction != nullptr ? correction->tables() : 1;
  if (models.size() != tables) {
    throw Error(Errc::usage,
                fmt::format("grove tune --report: {} pLogP tables and {} sets of reference "
                            "calibrations: each table needs the ping-pongs taken around its probe",
                            models.size(), tables));
  }
  const ModelSource& model = models.front();
  const Cells cells = read_cells(tsv_paths);
  std::string out;
  out += fmt::format("Model: {}. Measured: {}.\n\n", model.description, fmt::join(tsv_paths, ", "));
  for (size_t t = 1; t < models.size(); ++t)
    out += fmt::format("State table {}: {}.\n\n", t, models[t].description);
  auto reference_text = [&](size_t t) {
    std::string ref;
    for (const auto& [bytes, us] : correction->reference(t))
      ref += fmt::format("{}{} B {:.3f} us", ref.empty() ? "" : ", ", bytes, us);
    return ref;
  };
  if (correction != nullptr && models.size() == 1) {
    out += fmt::format(
        "Each cell's prediction is compared in the machine's state beside the cell: times the "
        "ratio of the cell's calibration ping-pong (before and after it) to the probe's ({}; "
        "interpolated in log size between the two; docs/tuning.md). Cells without a "
        "calibration keep the plain prediction.\n\n",
        reference_text(0));
  } else if (correction != nullptr) {
    std::string refs;
    for (size_t t = 0; t < models.size(); ++t)
      refs += fmt::format("{}table {}: {}", t ? "; " : "", t, reference_text(t));
    out += fmt::format(
        "Each cell is priced with the probe table of the state nearest its calibration "
        "ping-pongs (before and after it) and compared in the machine's state beside it: times "
        "the ratio of its ping-pongs to that table's probe's ({}; interpolated in log size "
        "between the two; docs/tuning.md). Cells without a calibration keep table 0's plain "
        "prediction.\n\n",
        refs);
  }

  // ---- Fidelity, one table per (collective, ranks).
  std::map<std::string, std::pair<int, int>> within;  // per collective: (in band, all)
  std::map<std::string, int> within_plain;  // per collective: in band without the correction
  int changed_cells = 0, changed_within = 0, uncalibrated = 0;
  std::vector<int> priced_with(models.size(), 0);  // calibrated cells per table
  std::map<std::pair<std::string, int>, std::set<std::string>> columns;
  for (const auto& [key, measured] : cells) {
    const auto& [collective, ranks, bytes] = key;
    for (const Measured& m : measured)
      if (modelled_spec(collective, ranks, bytes, m.algorithm))
        columns[{collective, ranks}].insert(m.algorithm);
  }
  out += "### Predicted over measured median, per cell (bold: outside +-20%)\n\n";
  for (const auto& [group, algorithms] : columns) {
    const auto& [collective, ranks] = group;
    out += fmt::format("{}, N = {}: measured median in us (predicted / measured)\n\n", collective,
                       ranks);
    out += "| bytes |";
    for (const std::string& a : algorithms)
      out += " " + a + " |";
    out += "\n|---|";
    for (size_t i = 0; i < algorithms.size(); ++i)
      out += "---|";
    out += "\n";
    for (const auto& [key, measured] : cells) {
      const auto& [c, n, bytes] = key;
      if (c != collective || n != ranks) continue;
      out += fmt::format("| {} |", bytes);
      for (const std::string& a : algorithms) {
        const auto it = std::find_if(measured.begin(), measured.end(),
                                     [&](const Measured& m) { return m.algorithm == a; });
        if (it == measured.end() || it->median_us <= 0) {
          out += " - |";
          continue;
        }
        const coll::AlgorithmSpec spec = *modelled_spec(c, n, bytes, a);
        const double predicted = predict(spec, n, bytes, model.port);
        if (std::isnan(predicted)) {  // shm without host terms in the table
          out += fmt::format(" {:.2f} (-) |", it->median_us);
          continue;
        }
        const double plain = predicted / it->median_us;
        double ratio = plain;
        if (correction != nullptr) {
          const size_t t = correction->nearest(it->key);
          const std::optional<double> f = correction->factor(it->key, bytes, t);
          if (f) {
            ++priced_with[t];
            const double in_state = t == 0 ? predicted : predict(spec, n, bytes, models[t].port);
            ratio = in_state / it->median_us * *f;
            if (correction->state(it->key)->changed) {
              ++changed_cells;
              changed_within += std::abs(ratio - 1) <= kFidelityBand;
            }
          } else {
            ++uncalibrated;
          }
        }
        auto& [in, all] = within[c];
        ++all;
        in += std::abs(ratio - 1) <= kFidelityBand;
        within_plain[c] += std::abs(plain - 1) <= kFidelityBand;
        out += fmt::format(" {:.2f} ({}) |", it->median_us, ratio_text(ratio));
      }
      out += "\n";
    }
    out += "\n";
  }
  int in_all = 0, all = 0, plain_all = 0;
  const auto share = [](int in, int of) { return of ? 100.0 * in / of : 0.0; };
  out += "### Fidelity: cells within +-20% of the measured median\n\n";
  if (correction == nullptr) {
    out += "| collective | within | cells | share |\n|---|---|---|---|\n";
  } else {
    out +=
        "| collective | within, in the cell's state | cells | share | within, plain prediction "
        "| share |\n|---|---|---|---|---|---|\n";
  }
  for (const auto& [c, counts] : within) {
    in_all += counts.first;
    all += counts.second;
    plain_all += within_plain[c];
    out += fmt::format("| {} | {} | {} | {:.0f}% |", c, counts.first, counts.second,
                       share(counts.first, counts.second));
    if (correction != nullptr)
      out += fmt::format(" {} | {:.0f}% |", within_plain[c], share(within_plain[c], counts.second));
    out += "\n";
  }
  out += fmt::format("| all | {} | {} | {:.0f}% |", in_all, all, share(in_all, all));
  if (correction != nullptr)
    out += fmt::format(" {} | {:.0f}% |", plain_all, share(plain_all, all));
  out += "\n\n";
  if (correction != nullptr) {
    out += fmt::format(
        "Cells whose ping-pongs before and after differ by more than 20% at the large size (the "
        "machine changed state while the cell ran): {}, of which {} within the band; cells "
        "without a calibration: {}.\n\n",
        changed_cells, changed_within, uncalibrated);
    if (models.size() > 1) {
      std::string counts;
      for (size_t t = 0; t < models.size(); ++t)
        counts +=
            fmt::format("{}table {} ({}): {}", t ? ", " : "", t, models[t].plogp, priced_with[t]);
      out += fmt::format("Calibrated cells priced with each table: {}.\n\n", counts);
    }
  }

  // ---- Regret.
  // Regret compares algorithms measured at different moments: with a
  // correction each median is first brought to the probe's state (divided
  // by its cell's factor), so a state change between two cells is not
  // counted as one algorithm beating another.
  Cells regret_cells = cells;
  if (correction != nullptr) {
    for (auto& [key, measured] : regret_cells)
      for (Measured& m : measured)
        if (const std::optional<double> f = correction->factor(m.key, std::get<2>(key), 0))
          m.median_us /= *f;
  }
  Regret tuned, ranking;
  for (const auto& [key, measured] : regret_cells) {
    const auto& [collective, ranks, bytes] = key;
    const Measured* best = nullptr;
    const Measured* automatic = nullptr;
    const Measured* predicted_best = nullptr;
    double predicted_min = 0;
    for (const Measured& m : measured) {
      if (m.median_us <= 0) continue;
      if (m.algorithm == "auto") {
        automatic = &m;
        continue;
      }
      if (best == nullptr || m.median_us < best->median_us) best = &m;
      if (const auto spec = modelled_spec(collective, ranks, bytes, m.algorithm)) {
        const double p = predict(*spec, ranks, bytes, model.port);
        if (std::isnan(p)) continue;
        if (predicted_best == nullptr || p < predicted_min) {
          predicted_best = &m;
          predicted_min = p;
        }
      }
    }
    if (best == nullptr) continue;
    const std::string where = fmt::format("{} N={} {} B", collective, ranks, bytes);
    if (automatic != nullptr) {
      tuned.add(automatic->median_us / best->median_us,
                fmt::format("{}: auto ({}) {:.3f} us, fastest {} {:.3f} us", where,
                            choice_of_auto(collective, ranks, bytes, ranks_per_host),
                            automatic->median_us, best->algorithm, best->median_us));
    }
    if (predicted_best != nullptr) {
      ranking.add(predicted_best->median_us / best->median_us,
                  fmt::format("{}: the model's pick {} {:.3f} us, fastest {} {:.3f} us", where,
                              predicted_best->algorithm, predicted_best->median_us, best->algorithm,
                              best->median_us));
    }
  }
  out += "### Regret\n\n";
  if (correction != nullptr) {
    out += models.size() > 1
               ? "Medians in table 0's state (each divided by its cell's factor against table "
                 "0's probe).\n\n"
               : "Medians in the probe's state (each divided by its cell's factor).\n\n";
  }
  out += fmt::format("- The call as made (auto) against the fastest measured algorithm: {}\n",
                     tuned.text());
  out += fmt::format("- The model's pick among the measured algorithms against the fastest: {}\n\n",
                     ranking.text());

  // ---- Scatter against Open MPI's rule.
  out += "### Scatter: grove's model against Open MPI 4.1's fixed rule\n\n";
  out +=
      "Predicted, N = 2..16, blocks 1 B .. 1 MiB: cells where the model's choice differs "
      "from Open MPI's rule\n\n| N | block | Open MPI | predicted us | model | predicted us | "
      "gain |\n|---|---|---|---|---|---|---|\n";
  int differ = 0, total = 0;
  for (int n = 2; n <= 16; ++n) {
    for (uint64_t b = 1; b <= (1u << 20); b *= 4) {
      const Candidate mine = first_schedule(rank_candidates("scatter", n, b, model.port));
      coll::AlgorithmSpec ompi;
      ompi.collective = "scatter";
      ompi.name = openmpi_scatter_rule(n, b);
      const double ompi_us = predict(ompi, n, b, model.port);
      ++total;
      if (mine.spec.name == ompi.name) continue;
      ++differ;
      out += fmt::format("| {} | {} | {} | {:.3f} | {} | {:.3f} | {:.1f}% |\n", n, b, ompi.name,
                         ompi_us, mine.spec.to_string(), mine.predicted_us,
                         100 * (1 - mine.predicted_us / ompi_us));
    }
  }
  out += fmt::format("\n{} of {} cells differ.\n\n", differ, total);
  out +=
      "Measured (where the TSVs have scatter cells): Open MPI's rule's algorithm against the "
      "model's choice, both run by grove\n\n| N | block | Open MPI rule | measured us | model's "
      "choice | measured us | winner |\n|---|---|---|---|---|---|---|\n";
  for (const auto& [key, measured] : cells) {
    const auto& [collective, ranks, bytes] = key;
    if (collective != "scatter") continue;
    const std::string rule = openmpi_scatter_rule(ranks, bytes);
    const std::string mine =
        first_schedule(rank_candidates("scatter", ranks, bytes, model.port)).spec.name;
    auto median_of = [&](const std::string& a) {
      for (const Measured& m : measured)
        if (m.algorithm == a) return m.median_us;
      return -1.0;
    };
    const double r = median_of(rule), m = median_of(mine);
    if (r <= 0 || m <= 0) continue;
    out += fmt::format("| {} | {} | {} | {:.3f} | {} | {:.3f} | {} |\n", ranks, bytes, rule, r,
                       mine, m, rule == mine ? "same" : (m < r ? "model" : "Open MPI"));
  }
  return out + "\n";
}

}  // namespace grove::tuning
