// What the next few events will read, prefetched (SimWorld::Impl::step
// calls it after taking each event).

#include "transport/sim/sim_world_impl.hpp"

namespace grove::sim {

// An event's loads are a chain (its message, the ranks' state and the
// stream the message names, then the completed execution's state), each
// at a place the event before did not predict once ranks' virtual times
// drift apart (alltoallv pairwise at 10,000 ranks visits the ranks three
// apart, in runs going down): waited for one after the other they are most
// of an event's time. Started a few events early, they overlap with the
// work in between. Each stage reads only what the stage before prefetched
// one event earlier. The events peeked at are the earliest source's next
// ones, mostly the next of their kind to be taken. These are hints only (a
// prefetch neither faults nor changes anything, and what the stages read
// they do not write), so what runs and in what order is the same with or
// without them.
void SimWorld::Impl::prefetch_ahead() {
  // ids[k]: the event k behind the next; all of one kind (one lane's).
  constexpr uint32_t kAhead = 5;
  uint32_t ids[kAhead];
  uint8_t kind;
  const uint32_t count = events.peek(ids, kAhead, kind);
  if (count == 0) return;
  const bool full = count == kAhead;
  switch (static_cast<EventKind>(kind)) {
    case EventKind::deliver:
      // Its record; its receiver's line; its stream (the receiver's cached
      // one, or a table slot, then the stream the slot names); the
      // execution of the receive it will match.
      if (full) __builtin_prefetch(&messages[ids[4]]);
      if (count > 3) __builtin_prefetch(&transports[static_cast<size_t>(messages[ids[3]].dst)]);
      if (count > 2) {
        const Message& m = messages[ids[2]];
        const RankState& rank = rank_state(m.dst);
        if (rank.cached_src == m.src)
          prefetch_stream(rank.cached_stream);
        else
          streams.prefetch(Key{m.dst, m.src});
      }
      if (count > 1) {
        const Message& m = messages[ids[1]];
        if (rank_state(m.dst).cached_src != m.src) {
          const uint32_t sid = streams.find(Key{m.dst, m.src});
          if (sid != kNone) prefetch_stream(sid);
        }
      }
      {
        const Message& m = messages[ids[0]];
        const uint32_t sid = stream_of(m.dst, m.src);
        if (sid != kNone && !streams.at(sid).posted.empty()) {
          const PostedRecv& oldest = streams.at(sid).posted.front();
          prefetch_completion_of(oldest.done, oldest.context);
        }
      }
      break;
    case EventKind::send_done:
      // Its record; its sender's line and the execution it completes.
      if (full) __builtin_prefetch(&messages[ids[4]]);
      if (count > 3) {
        const Message& m = messages[ids[3]];
        __builtin_prefetch(&transports[static_cast<size_t>(m.src)]);
        prefetch_completion_of(m.done, m.context);
      }
      break;
    case EventKind::recv_complete:
      if (full) __builtin_prefetch(&receives[ids[4]]);
      if (count > 3) {
        const Receive& r = receives[ids[3]];
        __builtin_prefetch(&transports[static_cast<size_t>(r.dst)]);
        prefetch_completion_of(r.done, r.context);
      }
      break;
    case EventKind::egress_ready:
    case EventKind::head_arrival:
      if (full) __builtin_prefetch(&messages[ids[4]]);  // the rest is per node
      break;
    default:
      break;
  }
}

}  // namespace grove::sim
