#include "suite/tsv.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <istream>
#include <map>
#include <ostream>

#include <fmt/format.h>

#include "grove/error.hpp"

namespace grove::bench::tsv {

std::vector<std::string_view> split_tabs(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t pos = 0;
  for (;;) {
    const size_t tab = line.find('\t', pos);
    if (tab == std::string_view::npos) {
      fields.push_back(line.substr(pos));
      return fields;
    }
    fields.push_back(line.substr(pos, tab - pos));
    pos = tab + 1;
  }
}

double parse_number(std::string_view text, std::string_view column, std::string_view where) {
  // strtod needs a terminated string; from_chars for double is not in GCC 10.
  const std::string copy(text);
  char* end = nullptr;
  const double value = std::strtod(copy.c_str(), &end);
  if (copy.empty() || end != copy.c_str() + copy.size() || !std::isfinite(value) || value < 0) {
    throw Error(Errc::protocol, fmt::format("{}: {} '{}' is not a finite non-negative number",
                                            where, column, text));
  }
  return value;
}

namespace {

template <class T>
T parse_integer(std::string_view text, std::string_view column, std::string_view where) {
  T value{};
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    throw Error(Errc::protocol,
                fmt::format("{}: {} '{}' is not a non-negative integer", where, column, text));
  }
  return value;
}

double parse_seconds(std::string_view text, std::string_view where) {
  return parse_number(text, "seconds", where);
}

std::vector<double> parse_rank_seconds(std::string_view text, int ranks, std::string_view where) {
  std::vector<double> out;
  if (text == "-") return out;
  size_t pos = 0;
  for (;;) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    out.push_back(parse_seconds(text.substr(pos, comma - pos), where));
    if (comma == text.size()) break;
    pos = comma + 1;
  }
  if (out.size() != static_cast<size_t>(ranks)) {
    throw Error(Errc::protocol, fmt::format("{}: rank_seconds has {} values for {} ranks", where,
                                            out.size(), ranks));
  }
  return out;
}

Row parse_row(std::string_view line, std::string_view where, bool with_ranks) {
  const auto f = split_tabs(line);
  const size_t expected = with_ranks ? 9 : 8;
  if (f.size() != expected) {
    throw Error(Errc::protocol, fmt::format("{}: {} fields, expected {} ({})", where, f.size(),
                                            expected, with_ranks ? kHeader : kSpanOnlyHeader));
  }
  for (size_t i = 0; i < 3; ++i) {
    if (f[i].empty())
      throw Error(Errc::protocol, fmt::format("{}: field {} is empty", where, i + 1));
  }
  Row row;
  row.library = std::string(f[0]);
  row.collective = std::string(f[1]);
  row.algorithm = std::string(f[2]);
  row.ranks = parse_integer<int>(f[3], "ranks", where);
  if (row.ranks < 1) throw Error(Errc::protocol, fmt::format("{}: ranks must be >= 1", where));
  row.bytes = parse_integer<uint64_t>(f[4], "bytes", where);
  if (std::find(std::begin(kCadences), std::end(kCadences), f[5]) == std::end(kCadences)) {
    throw Error(
        Errc::protocol,
        fmt::format("{}: cadence '{}' is not isolated, barrier-after or streaming", where, f[5]));
  }
  row.cadence = std::string(f[5]);
  row.iteration = parse_integer<uint64_t>(f[6], "iteration", where);
  row.seconds = parse_seconds(f[7], where);
  if (with_ranks) row.rank_seconds = parse_rank_seconds(f[8], row.ranks, where);
  return row;
}

}  // namespace

uint64_t parse_count(std::string_view text, std::string_view column, std::string_view where) {
  return parse_integer<uint64_t>(text, column, where);
}

std::string CellKey::text() const {
  return fmt::format("{}/{}/{}/{}/{}", collective, algorithm, ranks, bytes, cadence);
}

bool has_rank_times(const Cell& cell) {
  if (cell.rank_samples.size() != cell.samples.size() || cell.samples.empty()) return false;
  return std::all_of(cell.rank_samples.begin(), cell.rank_samples.end(), [&](const auto& r) {
    return r.size() == static_cast<size_t>(cell.key.ranks);
  });
}

std::string format_row(const Row& r) {
  std::string ranks = r.rank_seconds.empty() ? "-" : "";
  for (size_t i = 0; i < r.rank_seconds.size(); ++i)
    ranks += fmt::format("{}{:.9e}", i ? "," : "", r.rank_seconds[i]);
  return fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}\t{:.9e}\t{}\n", r.library, r.collective,
                     r.algorithm, r.ranks, r.bytes, r.cadence, r.iteration, r.seconds, ranks);
}

void write(std::ostream& out, const std::vector<Row>& rows) {
  out << kHeader << '\n';
  for (const Row& r : rows)
    out << format_row(r);
}

void write_file(const std::string& path, const std::vector<Row>& rows) {
  std::ofstream out(path);
  if (!out) throw Error(Errc::usage, fmt::format("cannot write TSV file '{}'", path));
  write(out, rows);
  out.flush();
  if (!out) throw Error(Errc::usage, fmt::format("writing TSV file '{}' failed", path));
}

std::vector<Row> rows_of(const std::vector<Cell>& cells) {
  std::vector<Row> rows;
  for (const Cell& c : cells) {
    for (size_t i = 0; i < c.samples.size(); ++i) {
      rows.push_back({c.library, c.key.collective, c.key.algorithm, c.key.ranks, c.key.bytes,
                      c.key.cadence, i, c.samples[i],
                      i < c.rank_samples.size() ? c.rank_samples[i] : std::vector<double>{}});
    }
  }
  return rows;
}

std::vector<Row> read(std::istream& in, std::string_view source) {
  std::vector<Row> rows;
  std::string line;
  size_t number = 0;
  bool header_seen = false, with_ranks = true;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    const std::string where = fmt::format("{}:{}", source, number);
    if (!header_seen) {
      if (line != kHeader && line != kSpanOnlyHeader) {
        throw Error(Errc::protocol,
                    fmt::format("{}: not a grove bench TSV (header '{}', expected '{}')", where,
                                line.substr(0, 80), kHeader));
      }
      header_seen = true;
      with_ranks = line == kHeader;
      continue;
    }
    rows.push_back(parse_row(line, where, with_ranks));
  }
  if (!header_seen) throw Error(Errc::protocol, fmt::format("{}: empty, no TSV header", source));
  return rows;
}

std::vector<Row> read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(Errc::usage, fmt::format("cannot read TSV file '{}'", path));
  return read(in, path);
}

std::vector<Cell> group(const std::vector<Row>& rows) {
  std::vector<Cell> cells;
  std::map<std::pair<std::string, CellKey>, size_t> index;
  for (const Row& r : rows) {
    CellKey key{r.collective, r.algorithm, r.ranks, r.bytes, r.cadence};
    auto [it, inserted] = index.try_emplace({r.library, key}, cells.size());
    if (inserted) cells.push_back({r.library, std::move(key), {}});
    cells[it->second].samples.push_back(r.seconds);
    cells[it->second].rank_samples.push_back(r.rank_seconds);
  }
  return cells;
}

}  // namespace grove::bench::tsv
