#pragma once
// Alltoallv: rank r sends send_counts[j] bytes from send_offsets[j] of its
// input to rank j, and receives recv_counts[i] bytes from rank i at
// recv_offsets[i] of its output. Counts may be zero; empty transfers are not
// posted, so the counts of a pair must agree (as in MPI) or the collective
// fails or times out naming the pending step.
//
//   pairwise  step i = 1 .. N-1 sends to r+i and receives from r-i, with the
//             posting depth of alltoall (docs/selection.md); for the automatic
//             rule, total_bytes is this rank's whole send volume and
//             peer_bytes its average per peer.
//   auto      pairwise

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "coll/algorithm.hpp"
#include "coll/select.hpp"
#include "sched/schedule.hpp"

namespace grove::coll {

struct AlltoallvArgs {
  int rank = 0;
  int size = 1;
  std::vector<size_t> send_counts;
  std::vector<size_t> send_offsets;  // empty: packed in rank order
  std::vector<size_t> recv_counts;
  std::vector<size_t> recv_offsets;  // empty: packed in rank order
  AlgorithmSpec algorithm;           // "auto" is resolved
  // The posting depth; 0 reads the parameter alltoall_posts.
  uint32_t posts = 0;
};

// Selection's view: bytes = this rank's send bytes / N (the mean block), total = this rank's send
// bytes.
CallFacts facts(const AlltoallvArgs& args);

// One rank's schedule. Throws grove::Error(invalid_argument) for bad
// arguments (counts or offsets not one per rank, a rank sending itself
// another count than it expects).
sched::Schedule build_alltoallv(const AlltoallvArgs& args);

}  // namespace grove::coll
