// Reading and writing decision tables (coll/select.hpp; the format is in
// docs/selection.md).
//
// Line numbers: nlohmann's parser keeps no positions, so the text is fed
// through an iterator that counts the newlines it passes; the parser's
// callback reads that count when a row's '{' has just been consumed.

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "coll/select.hpp"
#include "core/params.hpp"
#include "grove/error.hpp"

namespace grove::coll {
namespace {

constexpr std::string_view kFormat = "grove-selection/1";

using Json = nlohmann::ordered_json;

// A forward iterator over the text that counts the newlines passed.
class LineCounter {
 public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  LineCounter() = default;
  LineCounter(const char* p, int* line) : p_(p), line_(line) {}
  reference operator*() const { return *p_; }
  LineCounter& operator++() {
    if (*p_ == '\n') ++*line_;
    ++p_;
    return *this;
  }
  LineCounter operator++(int) {
    LineCounter old = *this;
    ++*this;
    return old;
  }
  bool operator==(const LineCounter& other) const { return p_ == other.p_; }

 private:
  const char* p_ = nullptr;
  int* line_ = nullptr;
};

int line_of_byte(std::string_view text, size_t byte) {
  int line = 1;
  for (size_t i = 0; i < byte && i < text.size(); ++i)
    if (text[i] == '\n') ++line;
  return line;
}

[[noreturn]] void fail(const std::string& source, int line, const std::string& cause) {
  if (line > 0)
    throw Error(Errc::invalid_argument, fmt::format("{} line {}: {}", source, line, cause));
  throw Error(Errc::invalid_argument, fmt::format("{}: {}", source, cause));
}

// A count or a byte size ("64KiB"); negative numbers and fractions refused.
uint64_t read_amount(const Json& value, bool bytes, const std::string& what,
                     const std::string& source, int line) {
  if (value.is_number_unsigned()) return value.get<uint64_t>();
  if (value.is_number_integer() || value.is_number_float()) {
    fail(source, line,
         fmt::format("{} is {}: a count must be a whole number >= 0", what, value.dump()));
  }
  if (bytes && value.is_string()) {
    try {
      return params::parse_bytes(value.get<std::string>(), what);
    } catch (const Error& e) {
      fail(source, line, e.what());
    }
  }
  fail(source, line,
       fmt::format("{} is {}: expected a number{}", what, value.dump(),
                   bytes ? " or a size such as \"64KiB\"" : ""));
}

SelectRow read_row(Collective collective, const Json& row, const std::string& source, int line) {
  const std::string name(collective_name(collective));
  if (!row.is_object()) fail(source, line, fmt::format("a row of {} is not an object", name));
  SelectRow out;
  out.line = line;
  bool have_algorithm = false;
  for (const auto& [key, value] : row.items()) {
    auto amount = [&](bool bytes) { return read_amount(value, bytes, key, source, line); };
    auto flag = [&] {
      if (!value.is_boolean()) fail(source, line, fmt::format("{} must be true or false", key));
      return value.get<bool>();
    };
    if (key == "algorithm") {
      if (!value.is_string()) fail(source, line, "algorithm must be a string");
      try {
        out.algorithm = parse_algorithm(name, value.get<std::string>());
      } catch (const Error& e) {
        fail(source, line, e.what());
      }
      if (out.algorithm.is_auto()) fail(source, line, "a row cannot choose 'auto'");
      have_algorithm = true;
    } else if (key == "note") {
      if (!value.is_string()) fail(source, line, "note must be a string");
      out.note = value.get<std::string>();
    } else if (key == "min_ranks") {
      out.ranks.min = amount(false);
    } else if (key == "max_ranks") {
      out.ranks.max = amount(false);
    } else if (key == "min_bytes") {
      out.bytes.min = amount(true);
    } else if (key == "max_bytes") {
      out.bytes.max = amount(true);
    } else if (key == "min_total") {
      out.total.min = amount(true);
    } else if (key == "max_total") {
      out.total.max = amount(true);
    } else if (key == "min_ranks_per_node") {
      out.ranks_per_node.min = amount(false);
    } else if (key == "max_ranks_per_node") {
      out.ranks_per_node.max = amount(false);
    } else if (key == "min_hosts") {
      out.hosts.min = amount(false);
    } else if (key == "max_hosts") {
      out.hosts.max = amount(false);
    } else if (key == "pow2_ranks") {
      out.pow2_ranks = flag();
    } else if (key == "count_below_pof2") {
      out.count_below_pof2 = flag();
    } else {
      fail(source, line,
           fmt::format("unknown key '{}' in a row of {} (known: algorithm, note, min_/max_ranks, "
                       "min_/max_bytes, min_/max_total, min_/max_ranks_per_node, min_/max_hosts, "
                       "pow2_ranks, "
                       "count_below_pof2)",
                       key, name));
    }
  }
  if (!have_algorithm) fail(source, line, fmt::format("a row of {} has no algorithm", name));
  for (const auto& [range, what] : {std::pair{&out.ranks, "ranks"},
                                    {&out.bytes, "bytes"},
                                    {&out.total, "total"},
                                    {&out.ranks_per_node, "ranks_per_node"}}) {
    if (range->min > range->max) {
      fail(source, line,
           fmt::format("min_{} {} is above max_{} {}", what, range->min, what, range->max));
    }
  }
  return out;
}

}  // namespace

SelectTable parse_select_table(std::string_view text, const std::string& source) {
  int line = 1;
  std::vector<int> row_lines;  // the line of every depth-2 object, in document order
  Json root;
  try {
    const LineCounter first(text.data(), &line);
    const LineCounter last(text.data() + text.size(), &line);
    root = Json::parse(
        first, last,
        [&](int depth, Json::parse_event_t event, Json&) {
          if (event == Json::parse_event_t::object_start && depth == 2) row_lines.push_back(line);
          return true;
        },
        /*allow_exceptions=*/true, /*ignore_comments=*/true);
  } catch (const Json::parse_error& e) {
    fail(source, line_of_byte(text, e.byte == 0 ? 0 : e.byte - 1),
         fmt::format("not valid JSON ({})", e.what()));
  }
  if (!root.is_object()) fail(source, 1, "the table must be a JSON object");
  if (!root.contains("format") || root["format"] != kFormat) {
    fail(source, 1, fmt::format("\"format\": \"{}\" is missing or different", kFormat));
  }
  SelectTable table;
  table.source = source;
  size_t next_row = 0;
  std::set<Collective> seen;
  for (const auto& [key, value] : root.items()) {
    if (key == "format" || key == "note") continue;
    if (key == "plogp") {
      if (!value.is_string()) fail(source, 0, "\"plogp\" must be a string (a pLogP table's path)");
      table.plogp = value.get<std::string>();
      continue;
    }
    const std::optional<Collective> collective = collective_named(key);
    if (!collective) {
      const int at = next_row < row_lines.size() ? row_lines[next_row] : 0;
      fail(source, at, fmt::format("unknown collective '{}'", key));
    }
    if (!value.is_array()) fail(source, 0, fmt::format("{} must be an array of rows", key));
    if (!seen.insert(*collective).second) fail(source, 0, fmt::format("{} appears twice", key));
    SelectTable::Rows rows{*collective, {}};
    for (const Json& row : value) {
      const int at = next_row < row_lines.size() ? row_lines[next_row] : 0;
      ++next_row;
      rows.rows.push_back(read_row(*collective, row, source, at));
    }
    table.collectives.push_back(std::move(rows));
  }
  return table;
}

SelectTable load_select_table(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail(path, 0, "cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  SelectTable table = parse_select_table(text.str(), path);
  if (!table.plogp.empty() && std::filesystem::path(table.plogp).is_relative()) {
    table.plogp = (std::filesystem::path(path).parent_path() / table.plogp).string();
  }
  return table;
}

std::string format_select_table(const SelectTable& table) {
  std::string out = fmt::format("{{\n  \"format\": \"{}\"", kFormat);
  if (!table.plogp.empty()) out += fmt::format(",\n  \"plogp\": {}", Json(table.plogp).dump());
  for (const SelectTable::Rows& rows : table.collectives) {
    out += fmt::format(",\n  \"{}\": [", collective_name(rows.collective));
    const char* separator = "\n";
    for (const SelectRow& row : rows.rows) {
      Json j;
      auto range = [&](const Range& r, const char* min_key, const char* max_key) {
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
      out += separator;
      out += "    " + j.dump();
      separator = ",\n";
    }
    out += "\n  ]";
  }
  out += "\n}\n";
  return out;
}

}  // namespace grove::coll
