#pragma once
// What a Comm and a Session hold, shared by every collective's front end.

#include <cstdint>
#include <memory>
#include <vector>

#include "api/call_plan.hpp"
#include "bootstrap/bootstrap.hpp"
#include "transport/transport.hpp"

namespace grove::runtime {
class FenceEngine;
}
namespace grove::shm {
class Group;
}

namespace grove::detail {

struct Hierarchy;

struct SessionState {
  std::unique_ptr<Bootstrap> bootstrap;
  std::unique_ptr<Transport> transport;  // world ranks
  FailureView failures;
  // Departed ranks in the order their notices came (failures.departed is a
  // set): errors name the first, which is most likely the cause of the rest.
  std::vector<int> departure_order;
  // The next context id this process may use. A new communicator takes the
  // maximum of its members' values, and every member moves past it: so two
  // communicators that share a rank never share a context id.
  uint32_t next_context = 1;
  double last_failure_poll = -1;  // transport time of the last notice poll
  // Active-message ids with a handler that only wakes a blocked wait
  // (rma::Group::register_wakeup), registered once on `transport`.
  std::vector<uint16_t> wakeup_ids;

  // Reads pending failure notices (non-blocking) into `failures`, at most
  // once per millisecond of `now` (transport time; the caller's reading).
  // Inline: a wait asks every round, and almost every time it is too soon.
  void poll_failures(double now) {
    if (now - last_failure_poll >= kFailurePollInterval) read_notices(now);
  }
  void poll_failures() { poll_failures(transport->now()); }

 private:
  // A poll() per progress loop would cost more than a small collective;
  // blocking waits also wake on the notice fd.
  static constexpr double kFailurePollInterval = 1e-3;  // seconds
  void read_notices(double now);
};

struct CommState {
  SessionState* session = nullptr;
  Transport* transport = nullptr;         // addresses ranks of this communicator (set_transport)
  std::unique_ptr<Transport> owned_view;  // the rank-mapping view of a sub-communicator
  uint32_t context = 0;
  uint32_t next_sequence = 0;  // 16 bits on the wire; wraps
  PlanCache cache;             // plans of this communicator's calls, by shape (coll/call_plan.hpp)
  // The reliable fence of this communicator (src/runtime/), made by the
  // first Comm::fence; replaced between fences if its parameters change.
  std::shared_ptr<runtime::FenceEngine> fence;
  // The shared-memory segment of small blocking collectives (coll/shm/);
  // null when the ranks do not share a host or it could not be mapped.
  std::shared_ptr<shm::Group> shm;
  // Where the ranks run: host_of[r] is rank r's host (Bootstrap::hosts()
  // numbering); `hosts` distinct hosts, at most `max_ranks_per_host` on one.
  std::vector<int> host_of;
  int hosts = 1;
  int max_ranks_per_host = 1;
  // The per-host and leader communicators of the hierarchical algorithms
  // (api/hierarchy.hpp); null unless the ranks span several hosts with
  // several ranks on some host.
  std::shared_ptr<Hierarchy> hierarchy;
  // A part of another communicator's hierarchy (its hosts' or leaders'
  // communicator): its calls follow the selection tables, never a forced
  // `<collective>_algorithm` (which is meant for the communicator the user
  // called: forcing `hier` there must not force it here).
  bool hierarchy_part = false;
  // world_ranks[r]: member r's rank in the session; empty for the world
  // communicator (where the two are equal).
  std::vector<int> world_ranks;

  // Sets `transport` (before any call) and keeps its rank and size here,
  // where a call's checks read them without a virtual call.
  void set_transport(Transport* t) {
    transport = t;
    rank_ = t->rank();
    size_ = t->size();
  }
  int rank() const { return rank_; }
  int size() const { return size_; }
  int world_rank(int member) const {
    return world_ranks.empty() ? member : world_ranks[static_cast<size_t>(member)];
  }
  // The member whose departure was learned first (SessionState::
  // departure_order, as last read by poll_failures), or -1. Recomputed only
  // when the failure view's version moved, so a wait can ask every round
  // (inline: that is a compare).
  int first_departed() {
    if (session == nullptr) return -1;
    if (session->failures.version == departed_version_) return first_departed_;
    return recompute_first_departed();
  }
  // Whether member `member` departed, by the view as last read.
  bool departed(int member) const;

 private:
  int rank_ = 0;  // transport's, kept by set_transport
  int size_ = 0;
  int recompute_first_departed();
  uint64_t departed_version_ = 0;  // the view's version first_departed_ is for
  int first_departed_ = -1;
};

}  // namespace grove::detail
