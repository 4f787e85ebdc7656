// The built-in decision table: the rules grove uses when no tuning file and
// no forced algorithm says otherwise. Each row says where it comes from.
// Measures per collective (what "bytes" and "total" mean): docs/selection.md.
//
// Sources: MPICH's thresholds (Thakur, Rabenseifner & Gropp 2005; their
// costs in docs/models.md), Open MPI's coll/tuned rule for scatter, and the
// pairwise alltoall posting-depth rule measured on a 3,072-rank cluster
// (docs/selection.md). `shm` rows come first wherever the shared-memory
// engine has the collective: it serves blocking calls whose message fits
// (shm_max_bytes, shm_slot_bytes) on a communicator with a segment; `hier`
// rows next, for communicators spanning several hosts with several ranks on
// some host (blocking calls: each host on its segment, the leaders by these
// tables).

#include "coll/select.hpp"

namespace grove::coll {
namespace {

constexpr std::string_view kBuiltinTable = R"json({
  "format": "grove-selection/1",
  "note": "grove's built-in rules",
  "barrier": [
    {"algorithm": "shm"},
    {"min_hosts": 2, "min_ranks_per_node": 2, "algorithm": "hier", "note": "per host on shared memory, then among one leader per host"},
    {"algorithm": "dissemination", "note": "ceil(log2 P) rounds, the fewest of the three"}
  ],
  "bcast": [
    {"algorithm": "shm"},
    {"min_hosts": 2, "min_ranks_per_node": 2, "algorithm": "hier", "note": "per host on shared memory, then among one leader per host"},
    {"min_hosts": 2, "min_ranks": 3, "min_bytes": "512KiB", "algorithm": "pipeline:seg=16384",
     "note": "across hosts every copy crosses a NIC: a pipelined chain sends about one copy per link (scatter_allgather 2(P-1)/P from the root); 16 KiB segments measured at 1.02x the wire bound at 8 hosts and 100 Mbit/s, 32 KiB at 2.2x (docs/cluster.md)"},
    {"min_hosts": 2, "min_ranks": 3, "min_bytes": 12288, "algorithm": "scatter_allgather",
     "note": "across hosts from MPICH's long-message threshold at any rank count: binomial's root sends the whole message log2 P times (hier4x2: the leaders of 4 hosts at 64 KiB, docs/cluster.md)"},
    {"max_ranks": 7, "algorithm": "binomial", "note": "MPICH: binomial below 8 ranks"},
    {"max_bytes": 12287, "algorithm": "binomial", "note": "MPICH: binomial below 12 KiB"},
    {"algorithm": "scatter_allgather", "note": "MPICH: scatter + ring allgather for long messages"}
  ],
  "scatter": [
    {"algorithm": "shm"},
    {"min_ranks": 11, "max_bytes": 299, "algorithm": "binomial",
     "note": "Open MPI coll/tuned: binomial above 10 ranks for blocks under 300 B"},
    {"algorithm": "flat", "note": "Open MPI coll/tuned; at 8 ranks 1 MiB blocks flat 416 us, binomial 1045 us"}
  ],
  "gather": [
    {"algorithm": "shm"},
    {"algorithm": "binomial", "note": "MPICH's only gather"}
  ],
  "allgather": [
    {"algorithm": "shm"},
    {"min_hosts": 2, "min_ranks_per_node": 2, "algorithm": "hier", "note": "per host on shared memory, then among one leader per host"},
    {"pow2_ranks": true, "max_total": 524287, "algorithm": "recursive_doubling",
     "note": "MPICH: recursive doubling for powers of two below 512 KiB in all"},
    {"max_total": 81919, "algorithm": "bruck", "note": "MPICH: Bruck below 80 KiB in all"},
    {"algorithm": "ring", "note": "MPICH: ring for long messages"}
  ],
  "allgatherv": [
    {"min_hosts": 2, "max_ranks": 8, "algorithm": "ring",
     "note": "across hosts, up to 8 ranks: P-1 steps of one run each on every link, against gather_bcast's root sending the whole result log2 P times (hier4x2: the leaders of 4 hosts at 8 KiB per rank, docs/cluster.md)"},
    {"max_total": 81919, "algorithm": "gather_bcast",
     "note": "two tree depths of rounds instead of N-1 below MPICH's Bruck threshold"},
    {"algorithm": "ring", "note": "bandwidth optimal"}
  ],
  "alltoall": [
    {"algorithm": "shm"},
    {"min_ranks": 8, "max_bytes": 256, "algorithm": "bruck", "note": "MPICH: Bruck for blocks up to 256 B at 8 ranks or more"},
    {"max_bytes": 32767, "algorithm": "linear", "note": "MPICH: isend/irecv below 32 KiB"},
    {"max_ranks": 8, "algorithm": "pairwise", "note": "posting depth rule: every transfer posted"},
    {"max_total": 66000, "algorithm": "pairwise", "note": "posting depth rule: every transfer posted"},
    {"max_bytes": "64KiB", "algorithm": "pairwise:posts=32", "note": "posting depth rule"},
    {"max_bytes": "1MiB", "algorithm": "pairwise:posts=16", "note": "posting depth rule"},
    {"max_ranks": 16, "max_bytes": "4MiB", "algorithm": "pairwise", "note": "posting depth rule"},
    {"max_bytes": "4MiB", "algorithm": "pairwise:posts=8", "note": "posting depth rule"},
    {"max_bytes": "8MiB", "algorithm": "pairwise:posts=4", "note": "posting depth rule"},
    {"max_ranks": 32, "algorithm": "pairwise:posts=4", "note": "posting depth rule"},
    {"algorithm": "pairwise:posts=1", "note": "posting depth rule"}
  ],
  "alltoallv": [
    {"max_ranks": 8, "algorithm": "pairwise", "note": "posting depth rule: every transfer posted"},
    {"max_total": 66000, "algorithm": "pairwise", "note": "posting depth rule: every transfer posted"},
    {"max_bytes": "64KiB", "algorithm": "pairwise:posts=32", "note": "posting depth rule"},
    {"max_bytes": "1MiB", "algorithm": "pairwise:posts=16", "note": "posting depth rule"},
    {"max_ranks": 16, "max_bytes": "4MiB", "algorithm": "pairwise", "note": "posting depth rule"},
    {"max_bytes": "4MiB", "algorithm": "pairwise:posts=8", "note": "posting depth rule"},
    {"max_bytes": "8MiB", "algorithm": "pairwise:posts=4", "note": "posting depth rule"},
    {"max_ranks": 32, "algorithm": "pairwise:posts=4", "note": "posting depth rule"},
    {"algorithm": "pairwise:posts=1", "note": "posting depth rule"}
  ],
  "reduce": [
    {"algorithm": "shm"},
    {"min_hosts": 2, "min_ranks_per_node": 2, "algorithm": "hier", "note": "per host on shared memory, then among one leader per host"},
    {"max_bytes": 2048, "algorithm": "binomial", "note": "MPICH: binomial up to 2 KiB"},
    {"count_below_pof2": true, "algorithm": "binomial",
     "note": "MPICH: binomial when the vector has fewer elements than the largest power of two <= ranks"},
    {"algorithm": "rabenseifner", "note": "MPICH: reduce-scatter + gather for long vectors"}
  ],
  "allreduce": [
    {"algorithm": "shm"},
    {"min_hosts": 2, "min_ranks_per_node": 2, "algorithm": "hier", "note": "per host on shared memory, then among one leader per host"},
    {"max_bytes": 2048, "algorithm": "recursive_doubling", "note": "MPICH: recursive doubling up to 2 KiB"},
    {"count_below_pof2": true, "algorithm": "recursive_doubling",
     "note": "MPICH: recursive doubling when the vector has fewer elements than the largest power of two <= ranks"},
    {"algorithm": "rabenseifner", "note": "MPICH: Rabenseifner for long vectors"}
  ],
  "reduce_scatter": [
    {"max_total": 524287, "algorithm": "recursive_halving",
     "note": "MPICH (commutative operations): recursive halving below 512 KiB in all"},
    {"algorithm": "ring", "note": "MPICH uses pairwise here: the same volume and (p-1) alpha"}
  ]
})json";

}  // namespace

const SelectTable& builtin_select_table() {
  // Parsed on first use: the collectives declare their algorithms while
  // libgrove loads, and the rows name them.
  static const SelectTable table = parse_select_table(kBuiltinTable, "built-in table");
  return table;
}

}  // namespace grove::coll
