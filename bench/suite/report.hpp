#pragma once
// Output of benchmark results: the readable table and the raw-sample TSV.

#include <cstdio>
#include <string>
#include <vector>

#include "suite/runner.hpp"

namespace grove::bench {

// The method and settings a reader needs to interpret the numbers.
std::string describe_method(const RunOptions& options, int ranks);
void print_table(std::FILE* out, const std::vector<CellResult>& cells);
// The raw samples as suite/tsv.hpp writes them (span and per-rank times).
void write_tsv(const std::string& path, const std::string& library,
               const std::vector<CellResult>& cells);

}  // namespace grove::bench
