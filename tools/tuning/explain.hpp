#pragma once
// `grove explain COLL -n N --size S`: which algorithm a call runs and why
// (coll::choose: forced parameter, tuning-file row or built-in row, and the
// rows passed over), beside every candidate's predicted time and, measured
// on the current job, its median.
//
// The call explained is the suite's cell (bench/suite/cells.hpp): root 0;
// S is the message for bcast, one rank's block for scatter, gather,
// allgather(v), alltoall(v) and reduce_scatter, the vector for reduce and
// allreduce (float32 sums); blocking unless asked otherwise. Its selection
// facts come from the collective's own facts() and the shared-memory checks
// mirror the front ends' (api/*_call.cpp), so the choice printed is the
// choice the call makes (tests/mp/explain_choice.cpp runs both).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "coll/select.hpp"
#include "grove/comm.hpp"
#include "tuning/candidates.hpp"

namespace grove::tuning {

struct ExplainCall {
  std::string collective;
  int ranks = 1;
  uint64_t bytes = 0;
  bool blocking = true;
};

// Where the call runs: what the shared-memory engine has to work with, and
// the hosts the hierarchical algorithm and the `min_hosts` rows look at.
struct JobContext {
  bool segment = false;      // the communicator has a shared-memory segment
  uint64_t slot_bytes = 0;   // each slot's size
  bool single_copy = false;  // the segment's members can read each other's memory (CMA)
  std::string no_segment;    // why not, when it has none
  int hosts = 1;             // distinct hosts of the ranks
  int ranks_per_node = 0;    // the most ranks on one host (0: all on one, as CallFacts)
  bool hierarchy = false;    // the communicator has a per-host hierarchy (api/hierarchy.hpp)
};

// Throws grove::Error(usage) for an unknown collective or a size the
// collective cannot take (a reduction's vector must be whole float32s).
coll::CallFacts call_facts(const ExplainCall& call);
// Why `shm` cannot run the call (empty: it can), as the front ends decide.
std::string shm_refusal(const ExplainCall& call, const JobContext& job);
// Why `hier` cannot run the call (empty: it can), as the front ends decide.
std::string hier_refusal(const ExplainCall& call, const JobContext& job);
// A hypothetical one-host job: a segment unless shm_collectives is off or
// there is one rank; slots of shm_slot_bytes; the single-copy path assumed
// to work (a job's members probe it when the segment is made); no
// hierarchy. With 0 < ranks_per_host < ranks, a job across
// ceil(ranks / ranks_per_host) hosts with that many ranks on each: no
// segment, and a hierarchy when a host has several ranks.
JobContext context_from_params(int ranks, int ranks_per_host = 0);
// What `comm` has (in a job).
JobContext context_of(const Comm& comm);

struct ExplainRow {
  coll::AlgorithmSpec spec;
  bool has_form = false;  // the algorithm has a closed form
  bool modelled = false;  // ... and a model predicted it
  double predicted_us = 0;
  int model_rank = 0;      // among all candidates, 1 = fastest predicted
  std::string cannot_run;  // non-empty: this call cannot run it, and why
  bool chosen = false;
  double measured_us = -1;  // < 0: not measured
};

struct Explanation {
  ExplainCall call;
  coll::CallFacts facts;
  coll::Choice choice;
  std::vector<ExplainRow> rows;
  std::string model;  // the model's description, or "" with no model
  std::string text() const;
};

// Every algorithm of the collective: the variant the model ranks best (its
// radix, segment), its default variant when that differs, and the chosen
// spec; predictions with `model` (may be null).
Explanation explain(const ExplainCall& call, const JobContext& job, const coll::PortModel* model,
                    const std::string& model_description);

}  // namespace grove::tuning
