#include "api/hierarchy.hpp"

#include <algorithm>
#include <cstring>

#include "api/exchange.hpp"
#include "coll/shm/group.hpp"

namespace grove::detail {
namespace {

// The scratch buffer, at least `bytes` long (grown only: a repeated call of
// one shape allocates nothing).
std::span<std::byte> scratch(Hierarchy& h, size_t bytes) {
  if (h.scratch.size() < bytes) h.scratch.resize(bytes);
  return std::span(h.scratch.data(), bytes);
}

bool is_leader(const Hierarchy& h) {
  return h.leaders.has_value();
}

}  // namespace

void place_ranks(const Comm& comm, std::vector<int> host_of) {
  CommState& state = comm.state();
  state.host_of = std::move(host_of);
  const int top = *std::max_element(state.host_of.begin(), state.host_of.end());
  std::vector<std::vector<int>> ranks_of_host(static_cast<size_t>(top) + 1);
  for (int r = 0; r < state.size(); ++r)
    ranks_of_host[static_cast<size_t>(state.host_of[static_cast<size_t>(r)])].push_back(r);
  std::erase_if(ranks_of_host, [](const std::vector<int>& ranks) { return ranks.empty(); });
  state.hosts = static_cast<int>(ranks_of_host.size());
  state.max_ranks_per_host = 0;
  for (const auto& ranks : ranks_of_host)
    state.max_ranks_per_host = std::max(state.max_ranks_per_host, static_cast<int>(ranks.size()));
  state.shm = attach_shared_memory(comm.state_ptr());
  if (state.hosts < 2 || state.max_ranks_per_host < 2) return;

  // Hosts are numbered here by their lowest rank, so host h's leader is
  // rank h of the leaders' communicator (both ordered by parent rank).
  auto h = std::make_shared<Hierarchy>(Hierarchy{.node = Comm(nullptr)});
  h->host_of.assign(static_cast<size_t>(state.size()), 0);
  h->node_index.assign(static_cast<size_t>(state.size()), 0);
  std::sort(ranks_of_host.begin(), ranks_of_host.end());
  for (size_t host = 0; host < ranks_of_host.size(); ++host) {
    for (size_t i = 0; i < ranks_of_host[host].size(); ++i) {
      const auto r = static_cast<size_t>(ranks_of_host[host][i]);
      h->host_of[r] = static_cast<int>(host);
      h->node_index[r] = static_cast<int>(i);
    }
    h->leader_of_host.push_back(static_cast<int>(host));
  }
  h->ranks_of_host = std::move(ranks_of_host);
  h->my_host = h->host_of[static_cast<size_t>(state.rank())];
  const bool leader = h->node_index[static_cast<size_t>(state.rank())] == 0;
  h->node = *split_or_none(comm, h->my_host, state.rank());
  h->leaders = split_or_none(comm, leader ? 0 : -1, state.rank());
  h->node.state().hierarchy_part = true;
  if (h->leaders) h->leaders->state().hierarchy_part = true;
  state.hierarchy = std::move(h);
}

bool hier_barrier(Hierarchy& h) {
  ++h.calls;
  h.node.barrier();
  if (is_leader(h)) h.leaders->barrier();
  h.node.barrier();
  return true;
}

// Root's host first receives from the root (unless the root leads it); the
// leaders broadcast among themselves; every other host (and the root's, when
// the root leads it) broadcasts from its leader.
bool hier_bcast(Hierarchy& h, std::span<std::byte> buffer, int root) {
  ++h.calls;
  const int root_host = h.host_of[static_cast<size_t>(root)];
  const int root_index = h.node_index[static_cast<size_t>(root)];
  if (h.my_host == root_host && root_index != 0) h.node.bcast(buffer, root_index);
  if (is_leader(h)) h.leaders->bcast(buffer, h.leader_of_host[static_cast<size_t>(root_host)]);
  if (h.my_host != root_host || root_index == 0) h.node.bcast(buffer, 0);
  return true;
}

// Each host reduces to its leader; the leaders reduce to the root's leader;
// a root that does not lead its host gets the result from its leader by a
// bcast on that host.
bool hier_reduce(Hierarchy& h, std::span<const std::byte> send, std::span<std::byte> recv,
                 Datatype type, ReduceOp op, int root) {
  ++h.calls;
  const size_t bytes = send.size();
  const int root_host = h.host_of[static_cast<size_t>(root)];
  const int root_index = h.node_index[static_cast<size_t>(root)];
  const bool on_root_host = h.my_host == root_host;
  const bool root_leads = root_index == 0;
  if (!is_leader(h)) {
    h.node.reduce(send, {}, type, op, 0);
    if (on_root_host && !root_leads)
      h.node.bcast(h.node.rank() == root_index ? recv : scratch(h, bytes), 0);
    return true;
  }
  // [0, bytes): this host's partial; [bytes, 2 bytes): the result when it
  // lands on this leader without being the root's output.
  const std::span<std::byte> area = scratch(h, 2 * bytes);
  const std::span<std::byte> partial = area.first(bytes);
  h.node.reduce(send, partial, type, op, 0);
  const std::span<std::byte> result = !on_root_host ? std::span<std::byte>{}
                                      : root_leads  ? recv
                                                    : area.subspan(bytes, bytes);
  h.leaders->reduce(partial, result, type, op, h.leader_of_host[static_cast<size_t>(root_host)]);
  if (on_root_host && !root_leads) h.node.bcast(result, 0);
  return true;
}

// Each host reduces to its leader, the leaders allreduce, each host
// broadcasts from its leader.
bool hier_allreduce(Hierarchy& h, std::span<const std::byte> send, std::span<std::byte> recv,
                    Datatype type, ReduceOp op) {
  ++h.calls;
  const size_t bytes = recv.size();
  std::span<const std::byte> input = send;
  if (send.empty()) {  // in place: the operand leaves the output before it is written
    std::span<std::byte> copy = scratch(h, bytes);
    std::memcpy(copy.data(), recv.data(), bytes);
    input = copy;
  }
  h.node.reduce(input, is_leader(h) ? recv : std::span<std::byte>{}, type, op, 0);
  if (is_leader(h)) h.leaders->allreduce(recv, type, op);
  h.node.bcast(recv, 0);
  return true;
}

// Each host gathers its ranks' blocks to its leader; the leaders allgatherv
// the hosts' runs; each leader places them in rank order; each host
// broadcasts from its leader.
bool hier_allgather(Hierarchy& h, std::span<const std::byte> send, std::span<std::byte> recv) {
  ++h.calls;
  const auto n = h.host_of.size();
  const size_t block = recv.size() / n;
  const std::vector<int>& mine = h.ranks_of_host[static_cast<size_t>(h.my_host)];
  // Area of scratch: [0, recv) the hosts' runs; then this host's run; then
  // an in-place operand.
  std::span<std::byte> space = scratch(h, recv.size() + mine.size() * block + block);
  std::span<std::byte> runs = space.first(recv.size());
  std::span<std::byte> own_run = space.subspan(recv.size(), mine.size() * block);
  std::span<const std::byte> input = send;
  if (send.empty()) {
    const size_t me =
        static_cast<size_t>(mine[static_cast<size_t>(h.node.rank())]);  // this rank in the parent
    std::span<std::byte> copy = space.subspan(recv.size() + mine.size() * block, block);
    std::memcpy(copy.data(), recv.data() + me * block, block);
    input = copy;
  }
  h.node.gather(input, is_leader(h) ? own_run : std::span<std::byte>{}, 0);
  if (is_leader(h)) {
    std::vector<size_t> counts;
    counts.reserve(h.ranks_of_host.size());
    for (const auto& ranks : h.ranks_of_host)
      counts.push_back(ranks.size() * block);
    h.leaders->allgatherv(own_run, runs, counts);
    size_t at = 0;
    for (const auto& ranks : h.ranks_of_host) {
      for (int r : ranks) {
        std::memcpy(recv.data() + static_cast<size_t>(r) * block, runs.data() + at, block);
        at += block;
      }
    }
  }
  h.node.bcast(recv, 0);
  return true;
}

}  // namespace grove::detail
