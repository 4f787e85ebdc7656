#include "transport/sim/plogp_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "grove/error.hpp"

namespace grove::sim {
namespace {

constexpr std::string_view kFormat = "grove-plogp/1";

[[noreturn]] void bad_line(std::string_view origin, int line, const std::string& why) {
  throw Error(Errc::invalid_parameter, fmt::format("pLogP table {}:{}: {}", origin, line, why));
}

bool parse_number(const std::string& token, double& out) {
  char* end = nullptr;
  out = std::strtod(token.c_str(), &end);
  return !token.empty() && end == token.c_str() + token.size() && std::isfinite(out);
}

constexpr std::string_view kPostedGap = "gap_posted";

// Checks a (bytes, us) curve made in code; `keyword` names it in errors.
void check_curve(const Curve& rows, std::string_view keyword) {
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].first < 0 || rows[i].second < 0)
      bad_line("(host terms)", 0, fmt::format("negative {} row", keyword));
    if (i > 0 && rows[i].first <= rows[i - 1].first)
      bad_line("(host terms)", 0, fmt::format("{} sizes must increase from row to row", keyword));
  }
}

// One `KEYWORD BYTES US` line into `curve`.
void parse_curve_line(const std::vector<std::string>& tokens, Curve& curve, std::string_view origin,
                      int number) {
  const std::string& keyword = tokens[0];
  double bytes = 0, us = 0;
  if (tokens.size() != 3 || !parse_number(tokens[1], bytes) || !parse_number(tokens[2], us) ||
      bytes < 0 || us < 0) {
    bad_line(
        origin, number,
        fmt::format("expected '{} <bytes> <microseconds>' with non-negative numbers", keyword));
  }
  if (!curve.empty() && bytes <= curve.back().first) {
    bad_line(origin, number,
             fmt::format("{} sizes must increase from row to row ({} after {})", keyword, bytes,
                         curve.back().first));
  }
  curve.emplace_back(bytes, us);
}

// The curve a table line starts with, if it is one.
std::optional<CopyKind> copy_line(const std::string& keyword) {
  for (CopyKind kind : kCopyKinds)
    if (keyword == copy_keyword(kind)) return kind;
  return std::nullopt;
}

// Linear interpolation between the rows, extrapolation from the last two
// above them; the first row's value below; never negative.
double interpolate(const CopyCurve& rows, double bytes) {
  if (rows.empty()) return 0;
  if (rows.size() == 1 || bytes <= rows.front().first) return rows.front().second;
  size_t lo = 0;
  while (lo + 2 < rows.size() && rows[lo + 1].first < bytes)
    ++lo;
  const auto& [b0, t0] = rows[lo];
  const auto& [b1, t1] = rows[lo + 1];
  const double value = t0 + (t1 - t0) * (bytes - b0) / (b1 - b0);
  return value < 0 ? 0 : value;
}

}  // namespace

const char* copy_keyword(CopyKind kind) {
  switch (kind) {
    case CopyKind::local:
      return "copy";
    case CopyKind::in:
      return "copy_in";
    case CopyKind::out:
      return "copy_out";
    case CopyKind::cma:
      return "copy_cma";
  }
  return "copy";
}

PlogpTable PlogpTable::parse(std::string_view text, std::string_view origin) {
  PlogpTable table;
  bool have_latency = false;
  bool declared = false;  // a `format` line: `end` is required
  int end_line = 0;       // the line of `end`, once seen
  std::istringstream in{std::string(text)};
  std::string line;
  int number = 0;  // the line being read; at the end, the file's last line
  while (std::getline(in, line)) {
    ++number;
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream fields(line);
    std::vector<std::string> tokens;
    for (std::string token; fields >> token;)
      tokens.push_back(token);
    if (tokens.empty()) continue;
    if (end_line > 0) bad_line(origin, number, fmt::format("text after 'end' (line {})", end_line));
    if (tokens[0] == "format") {
      if (tokens.size() != 2 || tokens[1] != kFormat)
        bad_line(origin, number, fmt::format("expected 'format {}'", kFormat));
      declared = true;
      continue;
    }
    if (tokens[0] == "end") {
      if (tokens.size() != 1) bad_line(origin, number, "'end' takes nothing after it");
      end_line = number;
      continue;
    }
    if (tokens[0] == "bytes") continue;  // header row
    if (tokens[0] == "L") {
      double value = 0;
      if (tokens.size() != 2 || !parse_number(tokens[1], value) || value < 0)
        bad_line(origin, number, "expected 'L <microseconds>' with a non-negative number");
      table.latency_us_ = value;
      have_latency = true;
      continue;
    }
    if (tokens[0] == "port") {
      if (tokens.size() != 2 || (tokens[1] != "serial" && tokens[1] != "shared"))
        bad_line(origin, number, "expected 'port serial' or 'port shared'");
      table.shared_port_ = tokens[1] == "shared";
      continue;
    }
    if (tokens[0] == "call_us" || tokens[0] == "shm_us") {
      double value = 0;
      if (tokens.size() != 2 || !parse_number(tokens[1], value) || value < 0)
        bad_line(origin, number,
                 fmt::format("expected '{} <microseconds>' with a non-negative number", tokens[0]));
      (tokens[0] == "call_us" ? table.call_us_ : table.shm_us_) = value;
      continue;
    }
    if (const std::optional<CopyKind> kind = copy_line(tokens[0])) {
      parse_curve_line(tokens, table.copies_[static_cast<size_t>(*kind)], origin, number);
      continue;
    }
    if (tokens[0] == kPostedGap) {
      parse_curve_line(tokens, table.posted_gap_, origin, number);
      continue;
    }
    if (tokens.size() != 4)
      bad_line(origin, number,
               fmt::format("expected 4 fields (bytes os_us or_us g_us), got {}", tokens.size()));
    Row row;
    double* fields_out[] = {&row.bytes, &row.os_us, &row.or_us, &row.g_us};
    for (size_t i = 0; i < 4; ++i) {
      if (!parse_number(tokens[i], *fields_out[i]) || *fields_out[i] < 0)
        bad_line(origin, number, fmt::format("'{}' is not a number >= 0", tokens[i]));
    }
    if (!table.rows_.empty() && row.bytes <= table.rows_.back().bytes) {
      bad_line(origin, number,
               fmt::format("sizes must increase from row to row ({} after {})", row.bytes,
                           table.rows_.back().bytes));
    }
    table.rows_.push_back(row);
  }
  // Whole-file errors name the last line: where the missing part should be.
  if (!have_latency) bad_line(origin, number, "no 'L <microseconds>' line");
  if (table.rows_.empty()) bad_line(origin, number, "no size rows");
  if (declared && end_line == 0) {
    bad_line(origin, number,
             fmt::format("truncated: the table declares '{}' but has no 'end' line after its {} "
                         "rows",
                         kFormat, table.rows_.size()));
  }
  return table;
}

PlogpTable PlogpTable::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(Errc::invalid_parameter, fmt::format("pLogP table {} cannot be read", path));
  std::stringstream text;
  text << in.rdbuf();
  return parse(text.str(), path);
}

PlogpTable PlogpTable::from_rows(double latency_us, std::vector<Row> rows) {
  PlogpTable table;
  table.latency_us_ = latency_us;
  table.rows_ = std::move(rows);
  table.check("(in code)");
  return table;
}

void PlogpTable::check(std::string_view origin) const {
  if (rows_.empty()) bad_line(origin, 0, "no size rows");
  if (latency_us_ < 0) bad_line(origin, 0, "negative latency");
  for (size_t i = 0; i < rows_.size(); ++i) {
    const Row& r = rows_[i];
    if (r.bytes < 0 || r.os_us < 0 || r.or_us < 0 || r.g_us < 0)
      bad_line(origin, static_cast<int>(i + 1), "negative value");
    if (i > 0 && r.bytes <= rows_[i - 1].bytes)
      bad_line(origin, static_cast<int>(i + 1), "sizes must increase from row to row");
  }
}

double PlogpTable::lookup(double bytes, double Row::*field) const {
  if (rows_.size() == 1 || bytes <= rows_.front().bytes) return rows_.front().*field;
  // The segment [lo, lo+1] containing `bytes`, or the last one to extrapolate.
  size_t lo = 0;
  while (lo + 2 < rows_.size() && rows_[lo + 1].bytes < bytes)
    ++lo;
  const Row& a = rows_[lo];
  const Row& b = rows_[lo + 1];
  const double value = a.*field + (b.*field - a.*field) * (bytes - a.bytes) / (b.bytes - a.bytes);
  return value < 0 ? 0 : value;
}

std::string PlogpTable::to_text() const {
  std::string out =
      fmt::format("format\t{}\nL\t{}\nbytes\tos_us\tor_us\tg_us\n", kFormat, latency_us_);
  for (const Row& r : rows_)
    out += fmt::format("{}\t{}\t{}\t{}\n", r.bytes, r.os_us, r.or_us, r.g_us);
  for (const auto& [bytes, us] : posted_gap_)
    out += fmt::format("{}\t{}\t{}\n", kPostedGap, bytes, us);
  if (shared_port_) out += "port\tshared\n";
  if (call_us_ > 0) out += fmt::format("call_us\t{}\n", call_us_);
  if (shm_us_ > 0) out += fmt::format("shm_us\t{}\n", shm_us_);
  for (CopyKind kind : kCopyKinds) {
    for (const auto& [bytes, us] : curve(kind))
      out += fmt::format("{}\t{}\t{}\n", copy_keyword(kind), bytes, us);
  }
  return out + "end\n";
}

double PlogpTable::copy_us(double bytes, CopyKind kind) const {
  return interpolate(curve(kind), bytes);
}

void PlogpTable::set_host_terms(double call_us, double shm_us, CopyCurve copy) {
  if (call_us < 0 || shm_us < 0) bad_line("(host terms)", 0, "negative call_us or shm_us");
  set_copy_curve(CopyKind::local, std::move(copy));
  call_us_ = call_us;
  shm_us_ = shm_us;
}

void PlogpTable::set_copy_curve(CopyKind kind, CopyCurve rows) {
  check_curve(rows, copy_keyword(kind));
  copies_[static_cast<size_t>(kind)] = std::move(rows);
}

double PlogpTable::send_gap_us(double bytes) const {
  const double g = g_us(bytes);
  return posted_gap_.empty() ? g : std::min(g, interpolate(posted_gap_, bytes));
}

void PlogpTable::set_posted_gap(Curve rows) {
  check_curve(rows, kPostedGap);
  posted_gap_ = std::move(rows);
}

}  // namespace grove::sim
