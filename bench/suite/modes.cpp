#include "suite/modes.hpp"

#include <cstdio>
#include <fstream>

#include <fmt/format.h>

#include "core/params.hpp"
#include "grove/error.hpp"
#include "suite/background.hpp"
#include "suite/plot.hpp"

namespace grove::bench {
namespace {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    if (comma > pos) out.push_back(text.substr(pos, comma - pos));
    pos = comma + 1;
  }
  return out;
}

std::vector<tsv::Cell> read_cells(const std::vector<std::string>& files) {
  std::vector<tsv::Row> rows;
  for (const std::string& f : files) {
    auto more = tsv::read_file(f);
    rows.insert(rows.end(), std::make_move_iterator(more.begin()),
                std::make_move_iterator(more.end()));
  }
  return tsv::group(rows);
}

int run_compare(const ModeArgs& mode) {
  if (mode.compare.size() != 2) {
    throw Error(Errc::usage, "--compare needs exactly two TSV files: A.tsv B.tsv");
  }
  const auto a = read_cells({mode.compare[0]});
  const auto b = read_cells({mode.compare[1]});
  const Comparison c = compare(a, b);
  print_comparison(stdout, c, mode.compare[0], mode.compare[1]);
  RunSummary run;
  run.settings = {fmt::format("grove bench --compare {} {}", mode.compare[0], mode.compare[1])};
  run.cells = a;
  run.cells.insert(run.cells.end(), b.begin(), b.end());
  ModeArgs rest = mode;
  if (!mode.markdown.empty()) {
    std::ofstream out(mode.markdown);
    out << comparison_markdown(c, mode.compare[0], mode.compare[1]);
    if (!out) throw Error(Errc::usage, fmt::format("cannot write '{}'", mode.markdown));
    rest.markdown.clear();
  }
  write_outputs(rest, run);
  return 0;
}

// The settings a --peers run wrote at the head of its TSV ("# " lines).
std::vector<std::string> settings_in(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line) && line.rfind("# ", 0) == 0;) {
    lines.push_back(line.substr(2));
  }
  return lines;
}

void write_tsv_with_settings(const std::string& path, const RunSummary& run) {
  std::ofstream out(path);
  if (!out) throw Error(Errc::usage, fmt::format("cannot write TSV file '{}'", path));
  for (const std::string& line : run.settings)
    out << "# " << line << "\n";
  for (const PeerStatus& p : run.peers) {
    out << "# " << p.name << ": " << (p.ran ? "" : "no numbers: ") << p.note << "\n";
  }
  tsv::write(out, tsv::rows_of(run.cells));
  out.flush();
  if (!out) throw Error(Errc::usage, fmt::format("writing TSV file '{}' failed", path));
}

int run_from_tsv(const ModeArgs& mode) {
  RunSummary run;
  for (const std::string& f : mode.from_tsv) {
    run.settings.push_back("raw samples: " + f);
    for (std::string& line : settings_in(f))
      run.settings.push_back(std::move(line));
  }
  run.cells = read_cells(mode.from_tsv);
  for (const std::string& name : split_list(mode.peers)) {
    bool present = false;
    for (const auto& c : run.cells) {
      present = present || c.library == name;
    }
    PeerStatus status{name, present, present ? "" : "no cells in the TSV files"};
    // The run's own line about the peer (its version and settings) moves here.
    const std::string prefix = name + ": ";
    for (auto it = run.settings.begin(); it != run.settings.end();) {
      if (it->rfind(prefix, 0) != 0) {
        ++it;
        continue;
      }
      if (present) status.note += (status.note.empty() ? "" : "; ") + it->substr(prefix.size());
      it = run.settings.erase(it);
    }
    run.peers.push_back(status);
  }
  print_summary(stdout, run);
  write_outputs(mode, run);
  return 0;
}

int run_peers(const ModeArgs& mode, const PeerRunOptions& suite) {
  PeerRunOptions o = suite;
  o.ranks = mode.ranks;
  o.peers = split_list(mode.peers);
  o.rounds = mode.rounds;
  o.peer_dir = mode.peer_dir;
  o.grove_executable = mode.grove_executable;
  o.job_timeout_seconds = mode.job_timeout_seconds;
  o.keep_logs = mode.keep_logs;
  if (!mode.background.empty()) o.background = parse_background(mode.background);
  o.wait_policies =
      mode.wait_policies == "all" ? all_wait_policies() : split_list(mode.wait_policies);
  if (o.ranks < 1) throw Error(Errc::usage, "--peers and --background need -n N (ranks per job)");
  const RunSummary run = run_with_peers(o);
  if (!mode.tsv.empty()) write_tsv_with_settings(mode.tsv, run);
  print_summary(stdout, run);
  write_outputs(mode, run);
  return 0;
}

}  // namespace

bool is_orchestration(const ModeArgs& mode) {
  return !mode.peers.empty() || !mode.compare.empty() || !mode.from_tsv.empty() ||
         !mode.background.empty();
}

int run_mode(const ModeArgs& mode, const PeerRunOptions& suite) {
  const int modes = (!mode.compare.empty() ? 1 : 0) + (!mode.from_tsv.empty() ? 1 : 0);
  if (modes > 1) throw Error(Errc::usage, "--compare and --from-tsv exclude each other");
  if (!mode.compare.empty()) return run_compare(mode);
  if (!mode.from_tsv.empty()) return run_from_tsv(mode);
  return run_peers(mode, suite);
}

void write_outputs(const ModeArgs& mode, const RunSummary& run) {
  if (!mode.json.empty()) write_json(mode.json, run);
  if (!mode.markdown.empty()) write_markdown(mode.markdown, run);
  if (!mode.plot.empty()) {
    for (const std::string& file : write_plots(mode.plot, run.cells)) {
      fmt::print(stderr, "grove bench: wrote {}\n", file);
    }
  }
}

std::vector<tsv::Cell> to_tsv_cells(const std::vector<CellResult>& results,
                                    const std::string& library) {
  std::vector<tsv::Cell> cells;
  for (const CellResult& r : results) {
    cells.push_back(
        {library,
         {r.collective, r.algorithm, r.ranks, r.bytes, std::string(cadence_name(r.cadence))},
         r.samples,
         r.rank_samples});
  }
  return cells;
}

std::vector<std::string> all_wait_policies() {
  const auto& registry = params::Registry::global();
  if (!registry.contains("wait_policy")) {
    throw Error(Errc::usage, "--wait-policies all: grove has no wait_policy parameter");
  }
  return registry.get("wait_policy").spec.choices;
}

}  // namespace grove::bench
