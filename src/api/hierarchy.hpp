#pragma once
// The hierarchical algorithm `hier` of barrier, bcast, reduce, allreduce and
// allgather, for a communicator whose ranks span several hosts with several
// ranks on some host: each call is a call on the ranks of each host (`node`,
// where the shared-memory engine serves it), a call among one leader per
// host (`leaders`, whose algorithm the selection tables choose for a
// communicator of one rank per host), and again a call on each host. Like
// `shm` it runs blocking calls only (selection passes it over for the
// others).
//
// Invariants: every rank of a host makes the same sequence of calls on
// `node` (the steps depend only on the call's arguments and the hosts, which
// every rank knows alike), and only leaders call on `leaders`; so the
// sub-communicators' calls match across ranks as the parent's did.
//
// Reductions combine each host's ranks in rank order, then the hosts'
// partial results in leader order (hosts by their lowest rank): the same
// bits on every rank, but another order than the flat algorithms'.

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "api/comm_state.hpp"
#include "grove/comm.hpp"
#include "grove/types.hpp"

namespace grove::detail {

struct Hierarchy {
  Comm node;                        // the ranks of this host, by parent rank
  std::optional<Comm> leaders;      // the lowest rank of every host, by parent rank; leaders only
  std::vector<int> host_of;         // parent rank -> host
  std::vector<int> node_index;      // parent rank -> its index in its host's node communicator
  std::vector<int> leader_of_host;  // host -> its leader's rank in `leaders`
  std::vector<std::vector<int>> ranks_of_host;  // host -> parent ranks, ascending
  int my_host = 0;
  std::vector<std::byte> scratch;  // grown as calls need, kept between calls
  uint64_t calls = 0;              // calls run hierarchically (tests count them)
};

// The ranks of `parent` that pass the same color >= 0 form a new
// communicator, ordered by (key, parent rank), as Comm::split; a rank that
// passes a negative color joins none (nullopt). Collective over `parent`.
std::optional<Comm> split_or_none(const Comm& parent, int color, int key);

// Fills comm.host_of, hosts and max_ranks_per_host from `host_of` (this
// communicator's ranks' hosts), and, when the ranks span several hosts with
// several on some host, makes the hierarchy; maps the shared-memory segment
// when all share one host. Collective over `comm`: every communicator is
// set up by it once it exists.
void place_ranks(const Comm& comm, std::vector<int> host_of);

bool hier_barrier(Hierarchy& h);
bool hier_bcast(Hierarchy& h, std::span<std::byte> buffer, int root);
bool hier_reduce(Hierarchy& h, std::span<const std::byte> send, std::span<std::byte> recv,
                 Datatype type, ReduceOp op, int root);
// `send` empty: in place.
bool hier_allreduce(Hierarchy& h, std::span<const std::byte> send, std::span<std::byte> recv,
                    Datatype type, ReduceOp op);
bool hier_allgather(Hierarchy& h, std::span<const std::byte> send, std::span<std::byte> recv);

}  // namespace grove::detail
