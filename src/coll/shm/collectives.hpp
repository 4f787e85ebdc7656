#pragma once
// Blocking collectives through a communicator's shared-memory segment
// (coll/shm/group.hpp), one file each: small ones through the slots, from
// shm_cma_min_bytes by the single-copy path. Each runs the call and returns
// true, or returns false having touched nothing when the call does not take
// this path (no segment: `group` null, an empty message, or neither path
// takes it: Group::route): the caller then runs its schedule. Arguments are validated by the
// caller (the front ends in coll/*_call.cpp) and their lengths are those of
// the matching schedule-path call; an empty `send` means in place where the
// collective has an in-place form.
//
// Results are exactly those of the schedule path, and reductions combine
// the ranks' contributions in rank order, ((r0 op r1) op r2) ..., on every
// rank alike.

#include <cstddef>
#include <span>

#include "coll/algorithm.hpp"
#include "coll/collective.hpp"
#include "grove/types.hpp"

namespace grove::shm {

class Group;

// The registry entry of the engine, algorithm `shm` of every collective it
// serves: no schedule (blocking calls only); its closed form is priced from
// the host terms of a probe table (coll/shm/cost.cpp).
coll::AlgorithmInfo algorithm(coll::Collective collective);

bool barrier(Group* group);
bool bcast(Group* group, std::span<std::byte> buffer, int root);
bool scatter(Group* group, std::span<const std::byte> send, std::span<std::byte> recv, int root);
bool gather(Group* group, std::span<const std::byte> send, std::span<std::byte> recv, int root);
bool allgather(Group* group, std::span<const std::byte> send, std::span<std::byte> recv);
bool alltoall(Group* group, std::span<const std::byte> send, std::span<std::byte> recv);
bool reduce(Group* group, std::span<const std::byte> send, std::span<std::byte> recv, Datatype type,
            ReduceOp op, int root);
bool allreduce(Group* group, std::span<const std::byte> send, std::span<std::byte> recv,
               Datatype type, ReduceOp op);

}  // namespace grove::shm
