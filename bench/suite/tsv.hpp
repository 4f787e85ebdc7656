#pragma once
// The raw-sample TSV every benchmark program writes (grove bench and the peer
// drivers), its strict reader, and grouping of rows into cells. Free of
// grove's library (only fmt and grove::Error) so the peers compile it in.
//
// Columns: library collective algorithm ranks bytes cadence iteration seconds
// One row per sample; `seconds` is the time of one call (a streaming sample
// is its batch's mean).

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace grove::bench::tsv {

inline constexpr std::string_view kHeader =
    "library\tcollective\talgorithm\tranks\tbytes\tcadence\titeration\tseconds";

struct Row {
  std::string library;
  std::string collective;
  std::string algorithm;
  int ranks = 0;
  uint64_t bytes = 0;
  std::string cadence;
  uint64_t iteration = 0;
  double seconds = 0;
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
};

// One row, tab-separated, newline-terminated; seconds as %.9e.
std::string format_row(const Row& row);
void write(std::ostream& out, const std::vector<Row>& rows);
void write_file(const std::string& path, const std::vector<Row>& rows);

// Rows of every cell, iterations numbered 0.. within each cell.
std::vector<Row> rows_of(const std::vector<Cell>& cells);

// Strict: the header line must match kHeader, every row must have 8 fields
// with numeric ranks/bytes/iteration/seconds; blank lines and lines starting
// with '#' are skipped. Throws grove::Error(protocol) naming source:line.
std::vector<Row> read(std::istream& in, std::string_view source);
std::vector<Row> read_file(const std::string& path);

// Pools rows into cells keyed by (library, CellKey): samples of the same
// cell from several files or rounds are concatenated in input order. Cells
// keep the order of their first row.
std::vector<Cell> group(const std::vector<Row>& rows);

}  // namespace grove::bench::tsv
