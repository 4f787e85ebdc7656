#pragma once
// Cross-memory attach (CMA): reading another process's memory with
// process_vm_readv, the single-copy path of the shared-memory engine
// (docs/shm.md, "Single copy"). The owner of a buffer publishes its address
// and length; readers copy straight from it into their own buffer.
//
// Whether CMA works between the members of a communicator is decided once,
// when its segment is made (shm/attach.cpp): every member reads a probe
// word in every other member's address space, and all agree on the outcome
// (cma_verdict), so the path is on for every member alike or for none.

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "coll/collective.hpp"

namespace grove::shm {

// Where the single-copy path starts for `collective` (every one but barrier
// has it; the segment's members must have agreed that CMA works): blocks of
// at least shm_cma_min_block_bytes (256 KiB) for scatter and alltoall, whose
// slot path funnels all N blocks through one rank's copies (the root's N in,
// or every rank's N in and N out); messages, blocks or vectors of at least
// shm_cma_min_bytes (512 KiB) for the others (gather's slot path lets every
// rank copy its block in at once: at 256 KiB it beat the single copy at 2,
// 4 and 8 ranks, docs/shm.md). 0 turns the path off.
size_t cma_min_bytes(coll::Collective collective);
// The name of that parameter, for messages.
std::string_view cma_param_name(coll::Collective collective);

// What one process_vm_readv loop did: `done` bytes copied, then `error`
// (an errno value; 0 when all of it was copied, and -1 when the kernel
// copied nothing more without an error: a short read).
struct PeerRead {
  int error = 0;
  size_t done = 0;
};
// Copies `to.size()` bytes at `address` in process `pid` into `to`.
PeerRead read_peer(pid_t pid, uint64_t address, std::span<std::byte> to);

// What a member sends about itself when a segment is made, so the others
// can probe it: its pid and the address, in its own address space, of a
// word holding `token` (a value of this process alone).
struct ProbeTarget {
  int32_t pid = 0;
  int32_t reserved = 0;
  uint64_t address = 0;
  uint64_t token = 0;
};
// This process's probe target.
ProbeTarget own_probe_target();

// What a member found when it probed every other member.
struct ProbeResult {
  int32_t ok = 0;     // 1: every peer's word was read and right
  int32_t peer = -1;  // else the first member it could not read
  int32_t error = 0;  // errno of that read; -1: short, -2: wrong value
  int32_t reserved = 0;
};
// Reads every member's probe word but `self`'s (targets in rank order).
ProbeResult probe_peers(std::span<const ProbeTarget> targets, int self);

// The members' common decision from every member's result (rank order):
// on only if every member could read every other; else the reason names the
// first member that could not, the peer and the cause.
struct CmaVerdict {
  bool on = false;
  std::string reason;  // empty when on
};
CmaVerdict cma_verdict(std::span<const ProbeResult> results);

// Text for a PeerRead error ("Operation not permitted", "short read").
std::string read_error_text(int error);

}  // namespace grove::shm
