#pragma once
// Reliable delivery of a payload from the root to every living rank down one
// topology: ONE mechanism, parameterised by the topology it asks for
// children (docs/fence.md). The fence runs it on the derived release
// tree, or on the routing tree when low_radix_release is off; the code path
// is the same, only the tree it asks differs.
//
// Per operation a rank holds the payload until its subtree has acknowledged:
// - `expected` is this topology's child count at (re)start; acks roll up this
//   topology; a repair (a newer failure view) restarts the operation and
//   replays the payload to every current child: replaying too much is safe,
//   too little hangs.
// - An ack counts only if it was computed under a view at least as new as
//   the one the operation (re)started in: completion information from an
//   older view is invalid once a subtree may have grown.
// - Lesson 3: an ack answers whoever asked (every rank that sent this rank
//   the payload), not whoever this rank now calls its parent. Answering a
//   rank that holds nothing under that id costs nothing.
// - Lesson 4: nobody defers. A restarted holder replays to its children at
//   once; it never waits for its own parent to replay first.
// - Lesson 5: a receiver behind the sender's tree version that was
//   addressed by a rank it does not call its parent takes the payload,
//   delivers it locally and parks the operation (no forward, no ack, nothing
//   derived) until its own view reaches that version. Traffic from the
//   parent is never parked. "Parent" here is the ROUTING tree's (docs/fence.md, lesson 2:
//   that question is asked only of the routing tree, never of the derived
//   release tree).
// - A payload received twice is a duplicate, "not involved": never an error;
//   the sender is answered like any other asker.
// - Operation ids are (topology, signature, generation): two topologies
//   never alias.
//
// Pipelined (segmented) release (docs/fence.md): the payload travels in
// segments of `segment` bytes (0: one segment, store-and-forward). A running,
// unparked relay forwards each segment with a new byte to its current
// children as it arrives, so the root's link, not the depth, bounds the
// release. "Holds the payload" above means holds ALL of it:
// - the payload is delivered, and an ack sent, only once every byte is held
//   (SegmentAssembly); acks still roll up only from whole subtrees;
// - a (re)start sends every segment held to every current child, and every
//   segment that arrives later is forwarded to them: together each child of a
//   restart gets the whole payload, the same "replay too much" rule;
// - a duplicate segment (no new byte) is "not involved", as a duplicate
//   payload was; it is answered with an ack only if it ends the payload
//   (every sender's last segment does), so a replay costs one ack, not one
//   per segment;
// - a partial payload of one result (PayloadKey) is replaced by a segment
//   of a NEWER result: the older's root departed before anyone survived with
//   all of it, and a new root built another. A segment of an older result,
//   or of a different result than a whole one held here, is dropped.
// - a segment whose total disagrees with the total already known for the
//   same result is a grove::Error(protocol) naming both ranks.

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "runtime/fence_wire.hpp"
#include "runtime/release_segments.hpp"
#include "topo/live_tree.hpp"
#include "transport/tag.hpp"

namespace grove::runtime {

struct OpId {
  tag::Topology topology = tag::Topology::release;
  uint32_t signature = 0;  // the communicator's context id
  uint64_t generation = 0;
  friend bool operator<(const OpId& a, const OpId& b) {
    if (a.topology != b.topology) return a.topology < b.topology;
    if (a.signature != b.signature) return a.signature < b.signature;
    return a.generation < b.generation;
  }
  friend bool operator==(const OpId& a, const OpId& b) { return !(a < b) && !(b < a); }
};

// What the mechanism needs from its owner (the fence engine).
class ReliableHost {
 public:
  virtual ~ReliableHost() = default;
  virtual int self() const = 0;
  virtual uint64_t tree_version() const = 0;
  // The tree of `topology` under this rank's current failure view.
  virtual const topo::LiveTree& tree(tag::Topology topology) = 0;
  // Fills in the header's configuration and tree version, encodes once and
  // sends to every peer.
  virtual void send(const std::vector<int>& peers, FenceMessage message) = 0;
  // The whole payload of `id` is held here for the first time, since `held`.
  virtual void delivered(const OpId& id, const std::shared_ptr<const Blob>& payload, double started,
                         double held) = 0;
  // This rank's subtree acknowledged `id` (the root: every rank holds it).
  virtual void completed(const OpId& id, double held_latest) = 0;
  virtual double now() const = 0;
};

// One segment of a release as received: bytes [offset, offset + size) of
// the `total`-byte payload of result `key`.
struct ReleaseSegment {
  PayloadKey key;
  uint64_t total = 0;
  uint64_t offset = 0;
  std::shared_ptr<const Blob> bytes;
};

struct ReliableStats {
  uint64_t forwards = 0;    // segment sends on a first forward
  uint64_t replays = 0;     // segment sends on a restart
  uint64_t duplicates = 0;  // segments received without a new byte
  uint64_t parked = 0;      // operations parked (docs/fence.md, lesson 5)
  uint64_t acks_sent = 0;
  uint64_t stale_acks = 0;    // acks from an older view or a non-child: not counted
  uint64_t stray_acks = 0;    // acks for an operation not held (docs/fence.md, lesson 3: harmless)
  uint64_t retired_acks = 0;  // acks sent for a retired operation
  uint64_t segments_received = 0;  // segments with at least one new byte
  uint64_t superseded = 0;         // partial payloads replaced by a newer result's
  uint64_t dropped_segments = 0;   // segments of an older or a conflicting result
};

class ReliableBcast {
 public:
  // `forward_delay` (seconds, fence_release_delay_ms) holds a non-root
  // relay's first forward until that long after it holds the whole payload,
  // to widen the window a fault can land in (the release is then
  // store-and-forward at that relay). `segment`: bytes per segment a holder
  // cuts its sends into (fence_release_segment; 0: the whole payload).
  ReliableBcast(ReliableHost& host, double forward_delay, uint64_t segment);

  // The root starts an operation (or a new root adopts one whose root
  // departed): hold, deliver locally, forward to the children.
  void originate(const OpId& id, std::shared_ptr<const Blob> payload, double started,
                 PayloadKey key);
  // A segment arrived from `from`, computed under `sender_version`.
  void on_payload(const OpId& id, int from, uint64_t sender_version, ReleaseSegment segment,
                  double started);
  void on_ack(const OpId& id, int from, uint64_t sender_version, bool retired, double held_latest);
  // The failure view changed: every operation restarts (parked ones once
  // the view has caught up with what they wait for).
  void on_view_change();
  // Sends forwards whose delay has passed.
  void poll();
  // Earliest time poll() has work (transport clock), or +infinity.
  double next_timer() const;

  // Forgets every operation of (topology, signature) below `generation`:
  // every rank held them. Later payloads for them are answered "retired".
  void retire_below(tag::Topology topology, uint32_t signature, uint64_t generation);

  // The whole payload of `id` is held here.
  bool holds(const OpId& id) const;
  // The subtree of this rank has acknowledged under the current restart.
  bool complete(const OpId& id) const;
  bool parked(const OpId& id) const;
  // Every held operation is complete (nothing this rank still owes anyone).
  bool quiescent() const;
  // Latest time any rank of this rank's subtree held the payload (0 if not known).
  double held_latest(const OpId& id) const;
  const ReliableStats& stats() const { return stats_; }
  std::string describe() const;

 private:
  struct Op {
    PayloadKey key;
    SegmentAssembly assembly;             // the bytes so far, until whole
    std::shared_ptr<const Blob> payload;  // the whole payload, once held
    double started = 0;                   // the root's stamp when the release began
    double held_latest = 0;               // max over this subtree of "held at"
    // "# children at time of (re)start", in this topology.
    std::vector<int> expected;
    std::set<int> acked;  // of `expected`, acks valid for this restart
    // The view version at the last (re)start: an ack counts only if computed
    // under a view at least this new.
    uint64_t restart_version = 0;
    std::set<int> askers;  // every rank that sent the payload: each is owed an ack
    bool parked = false;
    uint64_t park_until = 0;  // the sender's version that made it park
    bool running = false;     // (re)started at least once and not parked since
    // >= 0: the first forward is held until then (+infinity: until the
    // whole payload is held, then forward_delay longer).
    double forward_due = -1;
    bool complete = false;
  };

  // Every byte of `op` is here: keep the payload, deliver it locally.
  void hold_whole(const OpId& id, Op& op);
  void restart(const OpId& id, Op& op);
  // Every segment held, to `peers`; returns the segments sent.
  size_t send_held(const OpId& id, const Op& op, const std::vector<int>& peers);
  void send_segment(const OpId& id, const Op& op, const std::vector<int>& peers,
                    std::shared_ptr<const Blob> owner, size_t at, size_t length, uint64_t offset);
  void check_complete(const OpId& id, Op& op);
  void send_ack(const OpId& id, int peer, bool retired, double held_latest);
  bool retired(const OpId& id) const;

  ReliableHost& host_;
  double forward_delay_;
  uint64_t segment_;
  std::map<OpId, Op> ops_;
  // Per (topology, signature): generations below this are retired.
  std::map<std::pair<tag::Topology, uint32_t>, uint64_t> retired_below_;
  ReliableStats stats_;
};

}  // namespace grove::runtime
