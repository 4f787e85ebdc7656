#include "coll/select.hpp"

#include <mutex>

#include <fmt/format.h>

#include "coll/registry.hpp"
#include "core/params.hpp"
#include "grove/error.hpp"

namespace grove::coll {
namespace {

const params::StringParam tuning_file{
    "tuning_file", "",
    "A decision table (JSON, docs/selection.md; `grove tune` writes one) whose rows come before "
    "the built-in ones; empty: the built-in table alone. Every rank must load the same file"};

uint64_t largest_power_of_two_at_most(uint64_t n) {
  uint64_t p = 1;
  while (p * 2 <= n)
    p *= 2;
  return p;
}

std::string range_text(const Range& r, const char* what) {
  std::string out;
  if (r.min != 0) out += fmt::format("min_{} {}", what, r.min);
  if (r.max != UINT64_MAX) out += fmt::format("{}max_{} {}", out.empty() ? "" : ", ", what, r.max);
  return out;
}

const std::vector<SelectRow> kNoRows;

struct Source {
  const SelectTable* table;
  ChoiceFrom from;
};

// The tables in precedence order: the tuning file's (if any), the built-in.
std::vector<Source> sources(const std::shared_ptr<const SelectTable>& tuning) {
  std::vector<Source> out;
  if (tuning) out.push_back({tuning.get(), ChoiceFrom::tuning_file});
  out.push_back({&builtin_select_table(), ChoiceFrom::built_in});
  return out;
}

std::string where(const Source& source, const SelectRow& row, size_t index) {
  const std::string conditions = row.conditions();
  if (source.from == ChoiceFrom::built_in) {
    return fmt::format("built-in row {} ({})", index + 1, conditions);
  }
  return fmt::format("{} line {} ({})", source.table->source, row.line, conditions);
}

// The catalog's reasons, then the caller's.
std::string cannot_run_reason(const CallFacts& facts, const AlgorithmSpec& spec, bool blocking,
                              CannotRun cannot_run) {
  const AlgorithmInfo& info = algorithm_info(collective_name(facts.collective), spec.name);
  if (!info.schedule && !blocking) {
    return fmt::format("{} serves blocking calls only (this call is non-blocking or persistent)",
                       spec.name);
  }
  if (info.cannot_run) {
    std::string reason = info.cannot_run(facts.ranks);
    if (!reason.empty()) return reason;
  }
  return cannot_run ? cannot_run(spec) : std::string();
}

// Fills the arguments `spec` leaves open from the first matching row of the
// same algorithm, else the algorithm's default.
void complete(AlgorithmSpec& spec, const CallFacts& facts,
              const std::vector<Source>& in_precedence) {
  const AlgorithmInfo& info = algorithm_info(collective_name(facts.collective), spec.name);
  const bool wants_segment = info.takes_segment && spec.segment == 0;
  const bool wants_posts = info.takes_posts && spec.posts == 0;
  if (!wants_segment && !wants_posts) return;
  bool segment_found = !wants_segment, posts_found = !wants_posts;
  for (const Source& source : in_precedence) {
    for (const SelectRow& row : source.table->rows_of(facts.collective)) {
      if (row.algorithm.name != spec.name || !row.matches(facts)) continue;
      if (!segment_found && row.algorithm.segment != 0) {
        spec.segment = row.algorithm.segment;
        segment_found = true;
      }
      // A matching row of the algorithm without posts= means "unbounded".
      if (!posts_found) {
        spec.posts = row.algorithm.posts;
        posts_found = true;
      }
    }
  }
  if (!segment_found && info.default_segment) spec.segment = info.default_segment();
}

}  // namespace

bool SelectRow::matches(const CallFacts& f) const {
  const uint64_t ranks_count = static_cast<uint64_t>(f.ranks);
  const uint64_t per_node =
      f.ranks_per_node > 0 ? static_cast<uint64_t>(f.ranks_per_node) : ranks_count;
  if (!ranks.contains(ranks_count) || !bytes.contains(f.bytes) || !total.contains(f.total) ||
      !ranks_per_node.contains(per_node) || !hosts.contains(static_cast<uint64_t>(f.hosts))) {
    return false;
  }
  if (pow2_ranks && (ranks_count & (ranks_count - 1)) != 0) return false;
  if (count_below_pof2 && f.count >= largest_power_of_two_at_most(ranks_count)) return false;
  return true;
}

std::string SelectRow::conditions() const {
  std::string out;
  for (const std::string& part :
       {range_text(ranks, "ranks"), range_text(bytes, "bytes"), range_text(total, "total"),
        range_text(ranks_per_node, "ranks_per_node"), range_text(hosts, "hosts"),
        std::string(pow2_ranks ? "pow2_ranks" : ""),
        std::string(count_below_pof2 ? "count_below_pof2" : "")}) {
    if (part.empty()) continue;
    if (!out.empty()) out += ", ";
    out += part;
  }
  return out.empty() ? "every call" : out;
}

const std::vector<SelectRow>& SelectTable::rows_of(Collective collective) const {
  for (const Rows& rows : collectives)
    if (rows.collective == collective) return rows.rows;
  return kNoRows;
}

std::shared_ptr<const SelectTable> tuning_table() {
  static std::mutex mutex;
  static uint64_t seen_generation = ~uint64_t{0};
  static std::string seen_path;
  static std::shared_ptr<const SelectTable> table;
  std::lock_guard lock(mutex);
  const uint64_t generation = params::generation();
  if (generation == seen_generation) return table;
  const std::string& path = tuning_file.get();
  if (path != seen_path || (!path.empty() && !table)) {
    // Load before recording: a file that fails is tried again next time.
    table = path.empty() ? nullptr : std::make_shared<const SelectTable>(load_select_table(path));
    seen_path = path;
  }
  seen_generation = generation;
  return table;
}

Choice choose(const CallFacts& facts, std::string_view forced, bool blocking,
              CannotRun cannot_run) {
  const std::string name(collective_name(facts.collective));
  const std::vector<Source> in_precedence = sources(tuning_table());
  Choice choice;
  if (!forced.empty() && forced != "auto") {
    choice.spec = parse_algorithm(name, forced);
    const std::string reason = cannot_run_reason(facts, choice.spec, blocking, cannot_run);
    if (!reason.empty()) {
      throw Error(
          Errc::invalid_argument,
          fmt::format("{}: {}_algorithm={} cannot run this call: {}", name, name, forced, reason));
    }
    choice.from = ChoiceFrom::forced;
    choice.reason = fmt::format("{}_algorithm={}", name, forced);
    complete(choice.spec, facts, in_precedence);
    return choice;
  }
  for (const Source& source : in_precedence) {
    const std::vector<SelectRow>& rows = source.table->rows_of(facts.collective);
    for (size_t i = 0; i < rows.size(); ++i) {
      const SelectRow& row = rows[i];
      if (!row.matches(facts)) continue;
      const std::string reason = cannot_run_reason(facts, row.algorithm, blocking, cannot_run);
      if (!reason.empty()) {
        choice.passed_over.push_back(
            fmt::format("{}: {}: {}", where(source, row, i), row.algorithm.to_string(), reason));
        continue;
      }
      choice.spec = row.algorithm;
      choice.from = source.from;
      choice.reason = where(source, row, i);
      choice.note = row.note;
      complete(choice.spec, facts, in_precedence);
      return choice;
    }
  }
  throw Error(Errc::internal,
              fmt::format("{}: no row of the selection tables can run this call ({} ranks, {} "
                          "bytes)",
                          name, facts.ranks, facts.bytes));
}

Choice choose(const CallFacts& facts, bool blocking, CannotRun cannot_run) {
  return choose(facts, forced_algorithm_text(facts.collective), blocking, cannot_run);
}

AlgorithmSpec resolve(const CallFacts& facts, const AlgorithmSpec& spec) {
  if (spec.is_auto()) return choose(facts, "auto", false).spec;
  AlgorithmSpec out = spec;
  complete(out, facts, sources(tuning_table()));
  return out;
}

std::string describe_rows(Collective collective, int ranks) {
  std::string out;
  const std::string name(collective_name(collective));
  const std::string& forced = forced_algorithm_text(collective);
  if (forced != "auto") out += fmt::format("  forced: {}_algorithm={}\n", name, forced);
  for (const Source& source : sources(tuning_table())) {
    const std::vector<SelectRow>& rows = source.table->rows_of(collective);
    for (size_t i = 0; i < rows.size(); ++i) {
      const SelectRow& row = rows[i];
      if (ranks > 0 && !row.ranks.contains(static_cast<uint64_t>(ranks))) continue;
      out += fmt::format("  {:<9} {:>3}  {:<24} {}{}\n",
                         source.from == ChoiceFrom::built_in ? "built-in" : "tuning",
                         source.from == ChoiceFrom::built_in ? static_cast<int>(i + 1) : row.line,
                         row.algorithm.to_string(), row.conditions(),
                         row.note.empty() ? "" : "  # " + row.note);
    }
  }
  return out;
}

}  // namespace grove::coll
