#pragma once
// The copies the shared-memory engine makes between two ranks of one host,
// measured the way it makes them (docs/tuning.md, "Host terms"): a memcpy
// within one process prices none of them well, because the bytes are in
// the other core's cache (the slots) or are copied by the kernel
// (process_vm_readv).
//
//   copy_in   rank 0 copies m bytes from its own warm buffer into a shared
//             buffer rank 1 copied out of last (the slot path's writer);
//   copy_out  rank 1 copies them out into its own buffer (the reader);
//   copy_cma  rank 1 reads m bytes of rank 0's buffer (written once, then
//             only read, as an owner's buffer in a benchmark loop) with
//             process_vm_readv (the single-copy path's reader).
//
// Each sample is one copy, timed alone (less the clock's own cost) while the
// other rank spins on a flag in the shared buffer; copies alternate between
// two shared buffers as the engine's two slots do, and the next copy in
// waits for the previous one out, so every copy finds the caches as a call
// of the engine leaves them. Values are medians.

#include <cstdint>
#include <string>

#include "grove/comm.hpp"
#include "transport/sim/plogp_table.hpp"

namespace grove::tuning {

struct CrossCopies {
  sim::CopyCurve in, out, cma;  // (bytes, us), 1 B .. max_bytes (x4); valid on rank 0
  std::string missing;          // why a curve is empty ("" when none is)
};

// Collective over `pair` (two ranks of one host, rank 0 the writer and
// owner). A pair that cannot share a mapping (/proc/PID/fd of the other
// rank unreadable) gets no curves, one that cannot use process_vm_readv no
// `cma`; `missing` says why.
CrossCopies measure_cross_copies(Comm& pair, uint64_t max_bytes);

}  // namespace grove::tuning
