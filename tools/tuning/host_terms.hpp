#pragma once
// The host terms of a probe table (docs/tuning.md, "Host terms"): what one
// call through grove costs beyond the messages pLogP prices, measured with
// the benchmark suite's cell loop on two ranks of one host.
//
//   call_us  the median of a 1 B flat gather at N = 2 less its pLogP form
//            g(1) + L: argument checks, plan lookup, posting and completion
//            of one call, and the start skew of the loop;
//   shm_us   the median of the shared-memory engine's 64 B gather at N = 2
//            less its copies (its form's ci + c + co of 64 B): one publish
//            and one observe. 64 B is the first size past the inline lines
//            (coll/shm/group.hpp, kInlineBytes), where a reader's copy out
//            of the writer's slot is a copy of its own, as co prices it; a
//            contribution that fits an inline line arrives with the
//            observe, and the form prices its copy as c.
//   copy     one memcpy of m bytes on rank 0, m = 1 B .. 4 MiB (x4);
//   copy_in, copy_out, copy_cma  the copies between the pair's two ranks
//            (tuning/cross_copy.hpp), the same sizes.
//
// Gather calibrates because the tuning report checks bcast and scatter:
// the terms come from a call that is not among the cells they are judged on.

#include <string>
#include <utility>
#include <vector>

#include "grove/comm.hpp"
#include "transport/sim/plogp_table.hpp"
#include "tuning/cross_copy.hpp"

namespace grove::tuning {

struct HostMeasures {
  double schedule_gather_us = 0;  // median, flat, 1 B
  double shm_gather_us = 0;       // median, 64 B, less its copies; 0: the pair has no engine
  sim::CopyCurve copy;            // (bytes, us)
  CrossCopies cross;              // copy_in, copy_out, copy_cma
  std::string shm_missing;        // why shm_gather_us is 0
};

// Collective over `pair` (two ranks); the values are valid on its rank 0.
HostMeasures measure_host_terms(Comm& pair);

// Median time of one memcpy of each size (warm buffers, as the engine's
// slots are between calls), in us.
sim::CopyCurve measure_copy_curve(uint64_t max_bytes);

}  // namespace grove::tuning
