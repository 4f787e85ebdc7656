#pragma once
// The collectives grove implements, as one enumeration shared by the
// algorithm registry, the selection tables, the shared-memory engine and the
// call cache of the front ends.

#include <cstdint>
#include <optional>
#include <string_view>

namespace grove::coll {

enum class Collective : uint8_t {
  other,  // not cached (a plan made for one call, e.g. split's exchange)
  bcast,
  barrier,
  scatter,
  gather,
  allgather,
  allgatherv,
  alltoall,
  alltoallv,
  reduce,
  allreduce,
  reduce_scatter,
};

// "bcast", "reduce_scatter", ...; "other" for Collective::other.
std::string_view collective_name(Collective collective);
// The inverse of collective_name; nullopt for an unknown name.
std::optional<Collective> collective_named(std::string_view name);

}  // namespace grove::coll
