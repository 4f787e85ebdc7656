#include "suite/plot.hpp"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include <fmt/format.h>

#include "core/stats.hpp"
#include "grove/error.hpp"
#include "suite/subprocess.hpp"

namespace grove::bench {
namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "''";  // gnuplot's escape inside single quotes
    else
      out += c;
  }
  return out + "'";
}

using GroupKey = std::tuple<std::string, int, std::string>;  // collective, ranks, cadence

}  // namespace

std::string gnuplot_script(const std::vector<tsv::Cell>& cells, const std::string& output,
                           const std::string& title) {
  // Series: one per (library, algorithm), points in ascending size.
  std::map<std::string, std::map<uint64_t, stats::Summary>> series;
  for (const tsv::Cell& c : cells) {
    if (c.key.bytes == 0 || c.samples.empty()) continue;
    const std::string name =
        c.key.algorithm == "native" ? c.library : c.library + " " + c.key.algorithm;
    series[name][c.key.bytes] = stats::summarize(c.samples, c.key.text());
  }
  std::ostringstream gp;
  if (ends_with(output, ".png"))
    gp << "set terminal pngcairo size 960,600 font 'sans,10'\n";
  else
    gp << "set terminal svg size 960,600 dynamic font 'sans,10' background rgb 'white'\n";
  gp << "set output " << quoted(output) << "\n"
     << "set title " << quoted(title) << "\n"
     << "set logscale xy\nset format x '%.0s%cB'\nset xlabel 'bytes'\n"
     << "set ylabel 'time per call (us): median, band = 95% CI'\n"
     << "set key left top\nset grid\nset style fill transparent solid 0.2 noborder\n";
  int index = 0;
  for (const auto& [name, points] : series) {
    gp << "$s" << index << " << EOD\n";
    for (const auto& [bytes, s] : points) {
      gp << fmt::format("{} {:.6g} {:.6g} {:.6g}\n", bytes, s.median * 1e6, s.median_ci.lo * 1e6,
                        s.median_ci.hi * 1e6);
    }
    gp << "EOD\n";
    ++index;
  }
  if (series.empty()) {
    gp << "set label 'no cells with bytes > 0' at graph 0.5, 0.5 center\n"
       << "set xrange [1:2]\nset yrange [1:2]\nplot NaN notitle\n";
    return gp.str();
  }
  gp << "plot ";
  index = 0;
  for (const auto& entry : series) {
    if (index > 0) gp << ", \\\n     ";
    // Line colours from 1: gnuplot's colour 0 is the grid's.
    gp << fmt::format("$s{0} using 1:3:4 with filledcurves linecolor {1} notitle, ", index,
                      index + 1)
       << fmt::format(
              "$s{0} using 1:2 with linespoints linecolor {1} pointtype 7 "
              "pointsize 0.5 title {2}",
              index, index + 1, quoted(entry.first));
    ++index;
  }
  gp << "\n";
  return gp.str();
}

std::vector<std::string> write_plots(const std::string& path, const std::vector<tsv::Cell>& cells) {
  if (!ends_with(path, ".svg") && !ends_with(path, ".png")) {
    throw Error(Errc::usage, fmt::format("--plot '{}': the file must end in .svg or .png", path));
  }
  const std::string gnuplot = find_in_path("gnuplot");
  if (gnuplot.empty()) {
    throw Error(Errc::usage, "--plot needs gnuplot (scripts/deps.sh installs gnuplot-nox)");
  }
  std::map<GroupKey, std::vector<tsv::Cell>> groups;
  std::vector<GroupKey> order;
  for (const tsv::Cell& c : cells) {
    const GroupKey key{c.key.collective, c.key.ranks, c.key.cadence};
    if (!groups.count(key)) order.push_back(key);
    groups[key].push_back(c);
  }
  const std::string ext = path.substr(path.size() - 4);
  const std::string stem = path.substr(0, path.size() - 4);
  const std::string work = make_temp_dir("grove-plot");
  std::vector<std::string> written;
  for (const GroupKey& key : order) {
    const auto& [collective, ranks, cadence] = key;
    const std::string out =
        order.size() == 1 ? path
                          : fmt::format("{}-{}-n{}-{}{}", stem, collective, ranks, cadence, ext);
    const std::string script = fmt::format("{}/{}-n{}-{}.gp", work, collective, ranks, cadence);
    std::ofstream(script) << gnuplot_script(
        groups[key], out, fmt::format("{}, {} ranks, {}", collective, ranks, cadence));
    const ProcessResult r = run_process({gnuplot, script}, {}, script + ".log", 60);
    if (r.exit_code != 0 || r.timed_out) {
      throw Error(Errc::usage,
                  fmt::format("gnuplot failed on {} (script {}):\n{}", out, script, r.tail()));
    }
    written.push_back(out);
  }
  std::error_code ignored;
  std::filesystem::remove_all(work, ignored);
  return written;
}

}  // namespace grove::bench
