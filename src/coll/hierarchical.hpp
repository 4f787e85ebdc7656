#pragma once
// The registry entry of the hierarchical algorithm `hier` (barrier, bcast,
// reduce, allreduce, allgather): the call runs on each host's ranks, among
// one leader per host, and on each host again, as calls on sub-communicators
// (src/api/hierarchy.hpp). No schedule: blocking calls only.

#include "coll/algorithm.hpp"

namespace grove::coll {

AlgorithmInfo hierarchical_algorithm();

}  // namespace grove::coll
