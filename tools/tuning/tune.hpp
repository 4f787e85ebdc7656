#pragma once
// `grove tune`: the predicted-best algorithm of every tunable collective
// over a grid of ranks and sizes, from a port model (a probe's pLogP table,
// or its Hockney fit) and the closed forms, written as a decision table
// (docs/selection.md) whose rows carry their predicted costs as comments.
//
// Cells and rows: the choice at grid point (N_i, s_j) holds for ranks
// N_i .. N_{i+1}-1 and bytes s_j .. s_{j+1}-1 (the first size from 0, the
// last rank and size unbounded), as a rules file's "from this size up"
// reads; ranks below the grid's first fall through to the built-in table.
// Adjacent cells with the same choice share a row. With the probe's host
// terms the shared-memory engine is a candidate like any other (a one-host
// job's engine, where its slots take the call), and the ranges it wins are
// repeated with the fastest schedule algorithm for the calls it cannot take;
// without them a collective whose built-in table starts with `shm` keeps
// that row first (docs/shm.md), and a
// choice of an algorithm that takes a posting depth gets the built-in
// posting-depth rows within its range (the closed forms do not depend on
// the depth; the measured rule does, docs/selection.md).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "coll/select.hpp"
#include "tuning/candidates.hpp"

namespace grove::tuning {

struct Grid {
  std::vector<int> ranks;       // ascending, >= 2
  std::vector<uint64_t> sizes;  // ascending
  std::vector<std::string> collectives;
};

// "2-16,32:1024": A-B every integer, A:B doubling, or single values, comma
// separated; sorted and deduplicated. Throws grove::Error(usage).
std::vector<int> parse_ranks(std::string_view spec);
// A grid from the command line's texts (sizes as `grove bench --sizes`;
// collectives empty: every tunable one). Throws grove::Error(usage).
Grid make_grid(std::string_view ranks, std::string_view sizes,
               const std::vector<std::string>& collectives);

struct Measurement {
  coll::AlgorithmSpec spec;
  double predicted_us = 0;
  double median_us = 0;
  int model_rank = 0;  // 1 = the model's first
};

struct Cell {
  std::string collective;
  int ranks = 0;
  uint64_t bytes = 0;
  std::vector<Candidate> ranked;      // the model's best few, fastest first
  coll::AlgorithmSpec chosen;         // ranked[0], or the measured best
  std::vector<Measurement> measured;  // --verify: the model's top K, measured
};

struct Tuning {
  Grid grid;
  std::string model;        // "pLogP table p.txt (L 1.2 us, g(0) 0.3 us)"
  std::string plogp;        // the table's path, written as the file's "plogp"
  std::string command;      // how to make this file again
  std::vector<Cell> cells;  // by collective, then ranks, then bytes
  // The model priced the shared-memory engine (the table has host terms):
  // `shm` is one of the candidates rather than a built-in row kept first.
  bool shm_priced = false;
};

// How many ranked candidates each cell keeps.
inline constexpr size_t kKeptCandidates = 4;

Tuning tune(const Grid& grid, const coll::PortModel& model);

// The cells of `collective` at `ranks`, ascending in bytes.
std::vector<Cell*> cells_at(Tuning& tuning, const std::string& collective, int ranks);

// The decision table of `tuning` (what the file holds), and the file: JSON
// with `//` comments (the model, the grid, and per row the predicted times
// of the cells it covers and the runner-up).
coll::SelectTable to_table(const Tuning& tuning);
std::string tuning_file_text(const Tuning& tuning);

}  // namespace grove::tuning
