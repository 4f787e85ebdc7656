#include "coll/collective.hpp"

#include <array>

namespace grove::coll {
namespace {

constexpr std::array<std::pair<Collective, std::string_view>, 12> kNames{{
    {Collective::other, "other"},
    {Collective::bcast, "bcast"},
    {Collective::barrier, "barrier"},
    {Collective::scatter, "scatter"},
    {Collective::gather, "gather"},
    {Collective::allgather, "allgather"},
    {Collective::allgatherv, "allgatherv"},
    {Collective::alltoall, "alltoall"},
    {Collective::alltoallv, "alltoallv"},
    {Collective::reduce, "reduce"},
    {Collective::allreduce, "allreduce"},
    {Collective::reduce_scatter, "reduce_scatter"},
}};

}  // namespace

std::string_view collective_name(Collective collective) {
  for (const auto& [c, name] : kNames)
    if (c == collective) return name;
  return "other";
}

std::optional<Collective> collective_named(std::string_view name) {
  for (const auto& [c, n] : kNames)
    if (n == name && c != Collective::other) return c;
  return std::nullopt;
}

}  // namespace grove::coll
