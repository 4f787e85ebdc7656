#include "suite/calibration.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>

#include <fmt/format.h>

#include "grove/error.hpp"
#include "suite/tsv.hpp"

namespace grove::bench {
namespace {

// Round trips per size; the first of each is a warm-up and not kept. Few
// enough that a calibration costs well under a millisecond at 1 MiB, many
// enough that the median is not one descheduled trip.
constexpr int kTripsSmall = 21;
constexpr int kTripsLarge = 7;
// Point-to-point tags of this file (collectives never match them).
constexpr int kTagPing = 7001;
constexpr int kTagPong = 7002;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Rank 0's one-way times (us) of `trips` ping-pongs of `bytes` with rank 1.
double ping_pong_us(Comm& comm, size_t bytes, int trips) {
  std::vector<std::byte> buffer(bytes, std::byte{0x5a});
  std::vector<double> one_way;
  for (int t = 0; t < trips; ++t) {
    if (comm.rank() == 0) {
      const auto start = std::chrono::steady_clock::now();
      comm.send(buffer, 1, kTagPing);
      comm.recv(buffer, 1, kTagPong);
      const std::chrono::duration<double, std::micro> rtt =
          std::chrono::steady_clock::now() - start;
      if (t > 0) one_way.push_back(rtt.count() / 2);
    } else {
      comm.recv(buffer, 0, kTagPing);
      comm.send(buffer, 0, kTagPong);
    }
  }
  return comm.rank() == 0 ? median(std::move(one_way)) : 0;
}

}  // namespace

std::map<size_t, double> calibrate(Comm& comm) {
  std::map<size_t, double> out;
  if (comm.size() < 2) return out;
  if (comm.rank() <= 1) {
    const double small = ping_pong_us(comm, kCalibrationSmall, kTripsSmall);
    const double large = ping_pong_us(comm, kCalibrationLarge, kTripsLarge);
    if (comm.rank() == 0) out = {{kCalibrationSmall, small}, {kCalibrationLarge, large}};
  }
  comm.barrier();
  return out;
}

bool state_changed(const std::map<size_t, double>& before, const std::map<size_t, double>& after) {
  const auto b = before.find(kCalibrationLarge), a = after.find(kCalibrationLarge);
  if (b == before.end() || a == after.end()) return false;
  const double r = b->second / a->second;
  return r > kCalibrationChangedRatio || r < 1 / kCalibrationChangedRatio;
}

void append_calibration(const std::string& path, const std::vector<CalibrationRow>& rows) {
  bool fresh = true;
  {
    std::ifstream existing(path);
    fresh = !existing || existing.peek() == std::ifstream::traits_type::eof();
  }
  std::ofstream out(path, std::ios::app);
  if (!out) throw Error(Errc::usage, fmt::format("cannot write calibration file '{}'", path));
  if (fresh) out << kCalibrationHeader << '\n';
  for (const CalibrationRow& r : rows)
    out << fmt::format("{}\t{}\t{}\t{:.4f}\n", r.cell, r.moment, r.bytes, r.one_way_us);
  out.flush();
  if (!out) throw Error(Errc::usage, fmt::format("writing calibration file '{}' failed", path));
}

std::vector<CalibrationRow> read_calibration(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(Errc::usage, fmt::format("cannot read calibration file '{}'", path));
  std::vector<CalibrationRow> rows;
  std::string line;
  int number = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++number;
    const std::string where = fmt::format("{}:{}", path, number);
    if (!header) {
      if (line != kCalibrationHeader) {
        throw Error(Errc::protocol, fmt::format("{}: the header must be '{}' (tab-separated)",
                                                where, kCalibrationHeader));
      }
      header = true;
      continue;
    }
    if (line.empty()) continue;
    const std::vector<std::string_view> f = tsv::split_tabs(line);
    if (f.size() != 4) {
      throw Error(Errc::protocol, fmt::format("{}: {} fields, expected 4 ({})", where, f.size(),
                                              kCalibrationHeader));
    }
    CalibrationRow row;
    row.cell = std::string(f[0]);
    if (row.cell.empty()) throw Error(Errc::protocol, fmt::format("{}: empty cell", where));
    row.moment = std::string(f[1]);
    if (row.moment != "before" && row.moment != "after") {
      throw Error(Errc::protocol,
                  fmt::format("{}: moment '{}' is not 'before' or 'after'", where, f[1]));
    }
    row.bytes = tsv::parse_count(f[2], "bytes", where);
    row.one_way_us = tsv::parse_number(f[3], "one_way_us", where);
    if (row.one_way_us == 0) {
      throw Error(Errc::protocol,
                  fmt::format("{}: one_way_us '{}' is not a positive number", where, f[3]));
    }
    rows.push_back(std::move(row));
  }
  if (!header) throw Error(Errc::protocol, fmt::format("{}: empty (no header)", path));
  return rows;
}

}  // namespace grove::bench
