#pragma once
// How a blocking call runs on a communicator's shared-memory segment
// (Group::route in coll/shm/group.hpp decides it): not at all, through the
// slots, or by the single-copy path. Its own header so a call plan
// (api/call_plan.hpp) can keep the route it was resolved with.

#include <cstdint>

namespace grove::shm {

enum class Route : uint8_t { none, slots, single_copy };

}  // namespace grove::shm
