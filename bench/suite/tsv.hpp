#pragma once
// The raw-sample TSV every benchmark program writes (grove bench and the peer
// drivers), its strict reader, and grouping of rows into cells. Free of
// grove's library (only fmt and grove::Error) so the peers compile it in.
//
// Columns: library collective algorithm ranks bytes cadence iteration seconds
// rank_seconds. One row per sample; `seconds` is the span of one call (last
// rank's completion minus first rank's start; a streaming sample is its
// batch's mean); `rank_seconds` is each rank's own time of that call, rank 0
// first, comma-separated ("-" when not recorded), from which OSU's per-rank
// mean is computed (suite/rank_mean.hpp). Files of the earlier 8-column
// header (no rank_seconds) are still read; their cells have no per-rank mean.

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace grove::bench::tsv {

inline constexpr std::string_view kHeader =
    "library\tcollective\talgorithm\tranks\tbytes\tcadence\titeration\tseconds\trank_seconds";
inline constexpr std::string_view kSpanOnlyHeader =
    "library\tcollective\talgorithm\tranks\tbytes\tcadence\titeration\tseconds";

// The cadences a cell can have: a barrier before each call, a barrier after
// each call (OSU's loop), calls back to back.
inline constexpr std::string_view kCadences[] = {"isolated", "barrier-after", "streaming"};

struct Row {
  std::string library;
  std::string collective;
  std::string algorithm;
  int ranks = 0;
  uint64_t bytes = 0;
  std::string cadence;
  uint64_t iteration = 0;
  double seconds = 0;
  std::vector<double> rank_seconds{};  // empty, or one per rank
};

// Everything that identifies a cell except the library.
struct CellKey {
  std::string collective;
  std::string algorithm;
  int ranks = 0;
  uint64_t bytes = 0;
  std::string cadence;
  auto operator<=>(const CellKey&) const = default;
  // "bcast/auto/4/4096/isolated": also the seed of the cell's bootstrap.
  std::string text() const;
};

struct Cell {
  std::string library;
  CellKey key;
  std::vector<double> samples;  // seconds, in file order
  // Parallel to `samples`: each rank's own time of the sample's call, or
  // empty when the row had none.
  std::vector<std::vector<double>> rank_samples{};
};

// True when every sample of `cell` carries every rank's time.
bool has_rank_times(const Cell& cell);

// One row, tab-separated, newline-terminated; seconds as %.9e.
std::string format_row(const Row& row);
void write(std::ostream& out, const std::vector<Row>& rows);
void write_file(const std::string& path, const std::vector<Row>& rows);

// Rows of every cell, iterations numbered 0.. within each cell.
std::vector<Row> rows_of(const std::vector<Cell>& cells);

// Strict: the header line must match kHeader (9 fields a row) or
// kSpanOnlyHeader (8), with numeric ranks/bytes/iteration/seconds and, in
// rank_seconds, "-" or exactly `ranks` numbers; blank lines and lines starting
// with '#' are skipped. Throws grove::Error(protocol) naming source:line.
std::vector<Row> read(std::istream& in, std::string_view source);
std::vector<Row> read_file(const std::string& path);

// Field helpers of the strict reader, for the suite's other TSV files
// (suite/calibration.hpp). `where` names the file and line in errors
// (Errc::protocol).
std::vector<std::string_view> split_tabs(std::string_view line);
uint64_t parse_count(std::string_view text, std::string_view column, std::string_view where);
// A finite non-negative number.
double parse_number(std::string_view text, std::string_view column, std::string_view where);

// Pools rows into cells keyed by (library, CellKey): samples of the same
// cell from several files or rounds are concatenated in input order. Cells
// keep the order of their first row.
std::vector<Cell> group(const std::vector<Row>& rows);

}  // namespace grove::bench::tsv
