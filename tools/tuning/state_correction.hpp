#pragma once
// The machine's state per benchmark cell, as the report uses it: `grove
// bench --calibrate` times a ping-pong of ranks 0 and 1 at 8 B and 1 MiB
// just before and after every cell (bench/suite/calibration.hpp); the same
// ping-pong taken around the probe whose table the model uses is the
// reference. A cell's factor says how much slower (> 1) or faster (< 1)
// the machine ran beside it than beside the probe, and the report compares
// each cell with the model's prediction times that factor: the model in the
// state the cell ran in.
//
// The factor of a message of m bytes interpolates, in log m, between the
// small ping-pong's ratio (m <= 8 B: latency) and the large one's (m >=
// 1 MiB: bytes), because the machine's two states differ by different
// amounts at the two ends (docs/tuning.md).
//
// Several probe tables, one per state: a two-point factor carries the
// message-passing ping-pong's change of speed over to every term of the
// model, but the machine's states do not change every path alike (the
// kernel's single copy much less than UCX's copies, docs/tuning.md). With a
// table probed in each state, each with its own reference ping-pongs, a cell
// is priced with the table whose reference is nearest its own ping-pongs,
// and the factor then only bridges what is left between the two.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace grove::tuning {

struct CellState {
  std::map<size_t, double> one_way_us;  // geometric mean of before and after, per size
  // The before and after ping-pongs of the large size differ by more than
  // 20%: the machine changed state while the cell ran (the bench's own test,
  // bench::state_changed, which also decides --calibrate-retries).
  bool changed = false;
};

class StateCorrection {
 public:
  // `cells_path`: the bench's calibration file; `reference_sets`: per probe
  // table, the calibrations around that probe (every row of a set pooled).
  // Throws grove::Error naming a file that cannot be read, an empty set, or
  // a reference that lacks one of the cells' message sizes.
  StateCorrection(const std::string& cells_path,
                  const std::vector<std::vector<std::string>>& reference_sets);
  // One probe table.
  StateCorrection(const std::string& cells_path, const std::vector<std::string>& reference_paths)
      : StateCorrection(cells_path, std::vector<std::vector<std::string>>{reference_paths}) {}

  size_t tables() const { return references_.size(); }
  // The table whose reference ping-pongs are nearest the cell's (the least
  // sum over message sizes of |log(cell / reference)|; ties to the lower
  // index); 0 for a cell without a calibration.
  size_t nearest(const std::string& cell) const;

  // The factor of a cell (key text "bcast/auto/2/4096/isolated") whose
  // messages are `bytes` long, against the reference of `table` (by default
  // the nearest); nullopt when the cell was not calibrated.
  std::optional<double> factor(const std::string& cell, uint64_t bytes) const;
  std::optional<double> factor(const std::string& cell, uint64_t bytes, size_t table) const;
  const CellState* state(const std::string& cell) const;
  const std::map<size_t, double>& reference(size_t table = 0) const {
    return references_.at(table);
  }

 private:
  std::map<std::string, CellState> cells_;
  std::vector<std::map<size_t, double>> references_;  // one per probe table
};

}  // namespace grove::tuning
