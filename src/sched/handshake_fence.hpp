#pragma once
// The fences of a sleep handshake between processes sharing memory (the
// ring's, docs/rma.md "Waiting"; the shared-memory engine's, docs/shm.md):
// a side that publishes (a slot, a credit, a call entered) stores, fences,
// then loads the peer's sleeping word; a side about to sleep stores its
// sleeping word, fences, then looks at what the peer publishes. With a
// full fence on both sides one of them sees the other's store, so no
// wake-up is missed.
//
// The publishing side runs once per message or call, and its full fence
// waits for every store before it (cache lines still on their way to this
// core) to drain: a writer streaming 4 KiB messages spends a large part of
// each message there, and a bcast root in a call of a few bytes most of its
// time. So the fences are asymmetric where the kernel allows
// (membarrier, Linux 4.16): the publisher only keeps the compiler from
// reordering, and the sleeper, rarely, makes every running thread of every
// registered process (the ring's or the segment's peers) pass a full barrier before it looks.
// Either the publisher's load comes after that barrier (it sees the
// sleeper's word), or its store was drained by it (the sleeper sees the
// store).

namespace grove::sched {

// Registers this process for the sleeper's barrier (once; the first call
// decides). False when the kernel refuses: then publish_fence() is a full
// fence.
bool asymmetric_fences();

// The publisher's fence, between its store and its load of the sleeping word.
void publish_fence();

// The sleeper's fence, between its store of the sleeping word and its last
// look. False when it could not make the peers pass a barrier (the kernel
// refused): a publisher whose process registered may then have missed the
// sleeping word, so the caller must sleep only briefly.
bool sleep_fence();

}  // namespace grove::sched
