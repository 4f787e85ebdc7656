#pragma once
// Blocking collectives through a communicator's shared-memory segment
// (coll/shm/group.hpp), one file each: small ones through the slots, from
// shm_cma_min_bytes by the single-copy path. Each comes in two forms:
//
//   collective(Group* group, ...)  decides the route (Group::route of the
//       call's sizes) and runs the call; false, having touched nothing, when
//       it does not take this path (no segment: `group` null, an empty
//       message, or neither path takes it): the caller then runs its
//       schedule.
//   collective(Group& group, Route route, ...)  runs the call on `route`,
//       which the caller decided with Group::route of the same sizes (a call
//       plan keeps it, api/call_plan.hpp, so a repeated call reads no
//       parameter); false, having touched nothing, for Route::none. The
//       message is not empty.
//
// Arguments are validated by the caller (the front ends in
// api/*_call.cpp) and their lengths are those of the matching
// schedule-path call; an empty `send` means in place where the collective
// has an in-place form.
//
// Results are exactly those of the schedule path, and reductions combine
// the ranks' contributions in rank order, ((r0 op r1) op r2) ..., on every
// rank alike.

#include <cstddef>
#include <span>
#include <string_view>

#include "coll/algorithm.hpp"
#include "coll/collective.hpp"
#include "coll/shm/route.hpp"
#include "grove/types.hpp"

namespace grove::shm {

class Group;

// The registry entry of the engine, algorithm `shm` of every collective it
// serves: no schedule (blocking calls only); its closed form is priced from
// the host terms of a probe table (coll/shm/cost.cpp).
coll::AlgorithmInfo algorithm(coll::Collective collective);

// A barrier always takes the slot route (it writes nothing to a slot).
bool barrier(Group* group);
void barrier(Group& group);
// Whether the barrier takes its release form (barrier.cpp) for the
// parameter's value `choice` (auto, flags, release).
bool release_barrier_for(std::string_view choice);
bool bcast(Group* group, std::span<std::byte> buffer, int root);
bool bcast(Group& group, Route route, std::span<std::byte> buffer, int root);
bool scatter(Group* group, std::span<const std::byte> send, std::span<std::byte> recv, int root);
bool scatter(Group& group, Route route, std::span<const std::byte> send, std::span<std::byte> recv,
             int root);
bool gather(Group* group, std::span<const std::byte> send, std::span<std::byte> recv, int root);
bool gather(Group& group, Route route, std::span<const std::byte> send, std::span<std::byte> recv,
            int root);
bool allgather(Group* group, std::span<const std::byte> send, std::span<std::byte> recv);
bool allgather(Group& group, Route route, std::span<const std::byte> send,
               std::span<std::byte> recv);
bool alltoall(Group* group, std::span<const std::byte> send, std::span<std::byte> recv);
bool alltoall(Group& group, Route route, std::span<const std::byte> send,
              std::span<std::byte> recv);
bool reduce(Group* group, std::span<const std::byte> send, std::span<std::byte> recv, Datatype type,
            ReduceOp op, int root);
bool reduce(Group& group, Route route, std::span<const std::byte> send, std::span<std::byte> recv,
            Datatype type, ReduceOp op, int root);
bool allreduce(Group* group, std::span<const std::byte> send, std::span<std::byte> recv,
               Datatype type, ReduceOp op);
bool allreduce(Group& group, Route route, std::span<const std::byte> send,
               std::span<std::byte> recv, Datatype type, ReduceOp op);

}  // namespace grove::shm
