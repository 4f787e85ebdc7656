#pragma once
// Selection: which algorithm runs a call. Precedence, highest first:
//
//   1. a forced `<collective>_algorithm` parameter (anything but "auto");
//   2. the tuning file's decision table (parameter `tuning_file`, written by
//      hand or by `grove tune`; loaded when the parameter is set);
//   3. the built-in decision table (coll/builtin_table.cpp).
//
// A table is data: per collective an ordered list of rows, each a set of
// conditions on the call (ranks, bytes, total bytes, ranks per host, hosts,
// and two predicates) and an algorithm spec. The first row whose conditions hold
// and whose algorithm can run the call wins; a tuning file's rows come
// before the built-in ones, which end with a row without conditions. Rows
// also complete a spec that leaves an argument open: a forced `pipeline`
// takes its segment size, and a forced `pairwise` its posting depth, from
// the first matching row of the same algorithm. The file format and every
// collective's measure of "bytes": docs/selection.md. `grove select --show`
// prints the effective table.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "coll/algorithm.hpp"
#include "coll/collective.hpp"
#include "core/function_ref.hpp"

namespace grove::coll {

// What selection looks at. Each collective defines its measures once, in its
// header (`facts(const XArgs&)`).
struct CallFacts {
  Collective collective = Collective::other;
  int ranks = 1;
  uint64_t bytes = 0;      // the collective's measure: message, block or vector bytes
  uint64_t total = 0;      // bytes over all ranks' blocks (or a rank's whole send)
  int ranks_per_node = 0;  // the most ranks on one host; 0: every rank on one host
  int hosts = 1;           // distinct hosts the ranks run on
  uint64_t count = 0;      // elements of a reduction's vector; else bytes
};

// An inclusive range; the default holds everything.
struct Range {
  uint64_t min = 0;
  uint64_t max = UINT64_MAX;
  bool contains(uint64_t v) const { return v >= min && v <= max; }
  bool bounded() const { return min != 0 || max != UINT64_MAX; }
};

struct SelectRow {
  Range ranks;
  Range bytes;
  Range total;
  Range ranks_per_node;
  Range hosts;
  bool pow2_ranks = false;        // only for a power-of-two number of ranks
  bool count_below_pof2 = false;  // only for fewer elements than the largest power of two <= ranks
  AlgorithmSpec algorithm;
  std::string note;  // why the row exists (a source, a measurement, a prediction)
  int line = 0;      // the row's first line in its file

  bool matches(const CallFacts& facts) const;
  // "max_ranks 7, max_bytes 12287" ("every call" when unconditional).
  std::string conditions() const;
};

struct SelectTable {
  std::string source;  // "built-in", or the file's path
  // The pLogP table the rows were predicted from (top-level "plogp", which
  // `grove tune` writes), relative paths taken from the file's directory;
  // empty when the file names none. `grove explain` predicts with it.
  std::string plogp;
  struct Rows {
    Collective collective;
    std::vector<SelectRow> rows;
  };
  std::vector<Rows> collectives;

  // The rows of `collective` (empty when the table has none).
  const std::vector<SelectRow>& rows_of(Collective collective) const;
};

// Reads a table (JSON, comments allowed: docs/selection.md). Throws
// grove::Error(invalid_argument) naming `source`, the line and the cause for
// malformed JSON, an unknown key, collective or algorithm, a negative or
// fractional amount, or a reversed range.
SelectTable parse_select_table(std::string_view text, const std::string& source);
SelectTable load_select_table(const std::string& path);
// Writes `table` in the format parse_select_table reads (notes as "note").
std::string format_select_table(const SelectTable& table);

const SelectTable& builtin_select_table();
// The table of the `tuning_file` parameter (null when it is empty), loaded
// again whenever the parameter changes; errors as load_select_table.
std::shared_ptr<const SelectTable> tuning_table();

enum class ChoiceFrom { forced, tuning_file, built_in };

struct Choice {
  AlgorithmSpec spec;  // segment and posts filled in where the algorithm takes them
  ChoiceFrom from = ChoiceFrom::built_in;
  std::string reason;  // "bcast_algorithm=binomial", "t.json line 7: max_bytes 12287", ...
  std::string note;    // the chosen row's note (empty when forced)
  // Rows that matched before the chosen one but whose algorithm could not
  // run this call, each with the reason (for explanations).
  std::vector<std::string> passed_over;
};

// Why `spec` cannot run the call (empty: it can), beyond what the catalog
// knows: the front end adds what only it can tell (shm: a mapped segment
// the message fits in). An empty FunctionRef adds nothing.
using CannotRun = FunctionRef<std::string(const AlgorithmSpec& spec)>;

// The choice for a call. `blocking` false passes over algorithms without a
// schedule. `forced` is the `<collective>_algorithm` text ("auto" or empty:
// not forced). A forced algorithm that cannot run the call is refused:
// grove::Error(invalid_argument) naming the parameter and the reason.
Choice choose(const CallFacts& facts, std::string_view forced, bool blocking,
              CannotRun cannot_run = {});
// With the parameter's value as `forced`.
Choice choose(const CallFacts& facts, bool blocking, CannotRun cannot_run = {});

// What a builder runs for `spec`: "auto" replaced by the choice for a
// non-blocking call, and arguments the spec leaves open completed as
// `choose` does (a selection row's, else the algorithm's default).
AlgorithmSpec resolve(const CallFacts& facts, const AlgorithmSpec& spec);

// The rows in effect for `collective` as text, one per line, numbered, with
// their source: what `grove select --show` prints. `ranks` > 0 keeps only
// rows whose ranks range holds it.
std::string describe_rows(Collective collective, int ranks);

}  // namespace grove::coll
