#pragma once
// The machine's state beside each benchmark cell: `grove bench --calibrate
// FILE` times a point-to-point ping-pong between ranks 0 and 1 just before
// and just after every cell, at a small and a large message.
//
// Why: this virtual machine runs everything between its two cores at one of
// two speeds (a 1 MiB message about 30 or about 80 us one way, the shared-
// memory engine's 1 B call 0.18 or 0.7 us) and moves between them within
// tens of seconds (docs/tuning.md). A model fitted in one state and compared
// with a cell measured in the other is off by 2-3x however good its forms
// are; with each cell's calibration beside it, `grove tune --report
// --calibration` compares the model with each cell in the state it ran in.
//
// File: a TSV, header kHeader, one row per (cell, moment, message size):
//   cell        the cell's key (tsv::CellKey::text(): "bcast/auto/2/4096/isolated")
//   moment      "before" or "after" the cell
//   bytes       the ping-pong's message size
//   one_way_us  the median of its round trips, halved
// Rows are appended, so one file can hold several runs; a cell's later rows
// replace its earlier ones when read.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "grove/comm.hpp"

namespace grove::bench {

inline constexpr std::string_view kCalibrationHeader = "cell\tmoment\tbytes\tone_way_us";
// The two message sizes: the small one prices latency, the large one bytes.
inline constexpr size_t kCalibrationSmall = 8;
inline constexpr size_t kCalibrationLarge = size_t{1} << 20;
// Ping-pongs of the large size before and after a cell further apart than
// this ratio: the machine changed state while the cell ran.
inline constexpr double kCalibrationChangedRatio = 1.2;

// Whether `before` and `after` (calibrate()'s maps) say the state changed;
// false when either lacks the large size (ranks other than 0).
bool state_changed(const std::map<size_t, double>& before, const std::map<size_t, double>& after);

// One ping-pong measurement per size, on rank 0 (ranks 1.. get an empty
// map). Ranks 0 and 1 exchange; every other rank only joins the barrier
// that ends it, so a call costs the other ranks no more than a barrier.
// A communicator of one rank has nothing to measure: empty map.
std::map<size_t, double> calibrate(Comm& comm);

struct CalibrationRow {
  std::string cell;
  std::string moment;  // "before" or "after"
  size_t bytes = 0;
  double one_way_us = 0;
};

// Appends `rows` to `path`, writing the header first when the file is new
// or empty. Throws grove::Error(io) naming the file.
void append_calibration(const std::string& path, const std::vector<CalibrationRow>& rows);

// Strict reader: the header must be kCalibrationHeader, each row four
// fields, moment "before" or "after", bytes an integer, one_way_us a
// positive number. Throws grove::Error(protocol) naming path:line.
std::vector<CalibrationRow> read_calibration(const std::string& path);

}  // namespace grove::bench
