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
#include <vector>

#include <fmt/format.h>

#include "api/comm_state.hpp"
#include "api/exchange.hpp"
#include "api/rank_view.hpp"
#include "coll/shm/group.hpp"
#include "grove/comm.hpp"
#include "transport/tag.hpp"

namespace grove {
namespace {

struct Entry {
  int64_t color;
  int64_t key;
  int64_t next_context;
};

Comm make_comm(Comm& parent, int color, int key) {
  detail::CommState& state = parent.state();
  if (color < 0) {
    throw Error(
        Errc::invalid_argument,
        fmt::format("rank {}: split: color {} is negative (colors are >= 0)", state.rank(), color));
  }
  const Entry mine{color, key, state.session->next_context};
  const std::vector<Entry> all =
      detail::exchange_records(parent.state_ptr(), mine, "split(allgather of colors)");

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

  auto child = std::make_shared<detail::CommState>();
  child->session = state.session;
  child->owned_view = std::make_unique<detail::RankView>(*state.transport, std::move(members),
                                                         static_cast<int>(me), parent.state_ptr());
  child->transport = child->owned_view.get();
  child->context = static_cast<uint32_t>(context);
  child->shm = detail::attach_shared_memory(child);
  return Comm(std::move(child));
}

}  // namespace

Comm Comm::split(int color, int key) {
  return make_comm(*this, color, key);
}

Comm Comm::dup() {
  return make_comm(*this, 0, rank());
}

}  // namespace grove
