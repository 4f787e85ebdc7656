#pragma once
// Fits to `grove probe`'s measurements, and the table file it writes.
//
// Hockney: one message of m bytes takes T(m) = L + g(m) one way (pLogP's
// reading of a round trip, MODELS.md section 1b); fit alpha + m beta to it
// by least squares on the relative error, so a 1-byte and a 4 MiB message
// weigh alike.
//
// Release (docs/release-radix.md, section 5 of the model notes): a flat
// release of r copies of M bytes costs alpha + ceil(r/t) c + r M / B. grove
// sends from one thread (t = 1), so at each payload the time is a line in r,
// alpha + r (c + M/B); two payloads give B from the slopes, c from the small
// payload's slope and alpha from the intercepts.

#include <string>

#include "model/probe.hpp"

namespace grove::model::probe {

struct HockneyFit {
  double alpha_us = 0;
  double beta_us_per_byte = 0;
  double worst_relative = 0;  // largest |fit - T| / T over the sizes
  uint64_t worst_bytes = 0;   // where
  double bandwidth_gbps() const { return beta_us_per_byte > 0 ? 8e-3 / beta_us_per_byte : 0; }
};

// Throws grove::Error(invalid_argument) with fewer than two sizes.
HockneyFit fit_hockney(const sim::PlogpTable& table);

struct ReleaseFit {
  bool valid = false;  // false: no release measured, or the slopes do not rise with M
  double alpha_us = 0;
  double c_us = 0;
  double bandwidth_gbps = 0;
  int threads = 1;
  std::string why;  // when not valid
};

ReleaseFit fit_release(const ProbeResult& result);

struct PairInfo {
  int measurer = 0;
  int peer = 1;
  std::string kind;   // "intra-host", "inter-host"
  std::string hosts;  // "vm" or "gvh0 - gvh1"
  std::string transport;
};

// The table file: `format grove-plogp/1`, L, one row per size, `end`, and
// as comments the pair, the clock overhead, the flood, each size's RTT
// statistics and both fits (plogp_table.hpp reads it).
std::string table_text(const ProbeResult& result, const PairInfo& pair, const HockneyFit& hockney,
                       const ReleaseFit& release);

// gnuplot data: bytes os_us or_us g_us rtt_us, one row per size above 0.
std::string plot_data(const ProbeResult& result);

}  // namespace grove::model::probe
