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

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace grove::tuning {

struct CellState {
  std::map<size_t, double> one_way_us;  // geometric mean of before and after, per size
  // The before and after ping-pongs of the large size differ by more than
  // 20%: the machine changed state while the cell ran.
  bool changed = false;
};

class StateCorrection {
 public:
  // `cells_path`: the bench's calibration file; `reference_paths`: the
  // calibrations around the probe (every row of them pooled). Throws
  // grove::Error naming a file that cannot be read or a reference that lacks
  // one of the cells' message sizes.
  StateCorrection(const std::string& cells_path, const std::vector<std::string>& reference_paths);

  // The factor of a cell (key text "bcast/auto/2/4096/isolated") whose
  // messages are `bytes` long; nullopt when the cell was not calibrated.
  std::optional<double> factor(const std::string& cell, uint64_t bytes) const;
  const CellState* state(const std::string& cell) const;
  const std::map<size_t, double>& reference() const { return reference_; }

 private:
  std::map<std::string, CellState> cells_;
  std::map<size_t, double> reference_;
};

}  // namespace grove::tuning
