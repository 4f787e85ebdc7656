// Comm::split and Comm::dup: new communicators over a subset (or all) of
// this one's ranks, each with its own context id.
//
// Context ids: every process keeps SessionState::next_context, larger than
// the context of every communicator it belongs to. A new communicator takes
// the maximum of its members' values and each member moves past it, so a
// new context differs from that of every communicator any member is in:
// two communicators that share a rank never share a context id (and ranks
// that share none never exchange messages).

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "api/comm_state.hpp"
#include "api/exchange.hpp"
#include "api/hierarchy.hpp"
#include "api/rank_view.hpp"
#include "grove/comm.hpp"
#include "transport/tag.hpp"

namespace grove {
namespace {

struct Entry {
  int64_t color;
  int64_t key;
  int64_t next_context;
};

void check_color(const detail::CommState& state, int color) {
  if (color < 0) {
    throw Error(
        Errc::invalid_argument,
        fmt::format("rank {}: split: color {} is negative (colors are >= 0)", state.rank(), color));
  }
}

}  // namespace

namespace detail {

std::optional<Comm> split_or_none(const Comm& parent, int color, int key) {
  detail::CommState& state = parent.state();
  const Entry mine{color, key, state.session->next_context};
  const std::vector<Entry> all =
      detail::exchange_records(parent.state_ptr(), mine, "split(allgather of colors)");

  if (color < 0) return std::nullopt;
  std::vector<int> members;  // parent ranks of this color
  int64_t context = 0;
  for (int r = 0; r < state.size(); ++r) {
    if (all[static_cast<size_t>(r)].color != color) continue;
    members.push_back(r);
    context = std::max(context, all[static_cast<size_t>(r)].next_context);
  }
  std::stable_sort(members.begin(), members.end(), [&](int a, int b) {
    return all[static_cast<size_t>(a)].key < all[static_cast<size_t>(b)].key;
  });
  if (context >= (int64_t{1} << tag::kContextBits)) {
    throw Error(Errc::invalid_argument,
                fmt::format("rank {}: split: out of communicator context ids ({} in use)",
                            state.rank(), context));
  }
  state.session->next_context = static_cast<uint32_t>(context + 1);
  const auto me = std::find(members.begin(), members.end(), state.rank()) - members.begin();

  std::vector<int> hosts;  // of the new communicator's ranks
  hosts.reserve(members.size());
  for (int m : members)
    hosts.push_back(state.host_of[static_cast<size_t>(m)]);
  auto child = std::make_shared<detail::CommState>();
  child->session = state.session;
  child->world_ranks.reserve(members.size());
  for (int member : members)
    child->world_ranks.push_back(state.world_rank(member));
  child->owned_view = std::make_unique<detail::RankView>(*state.transport, std::move(members),
                                                         static_cast<int>(me), parent.state_ptr());
  child->set_transport(child->owned_view.get());
  child->context = static_cast<uint32_t>(context);
  Comm comm(std::move(child));
  place_ranks(comm, std::move(hosts));
  return comm;
}

}  // namespace detail

Comm Comm::split(int color, int key) {
  check_color(state(), color);
  return *detail::split_or_none(*this, color, key);
}

Comm Comm::dup() {
  return *detail::split_or_none(*this, 0, rank());
}

}  // namespace grove
