#pragma once
// How ranks find each other. A Bootstrap is a slow, reliable side channel
// used at start-up (exchanging transport addresses) and for failure notices.
// Backends: `local` (the rendezvous socket of `grove run`), `singleton`
// (size 1, no launcher), later `pmix`.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "transport/factory.hpp"

namespace grove {

using Blob = std::vector<std::byte>;

// A rank left the job. `version` is the launcher's count of departures (and
// later returns) learned so far: strictly increasing across notices.
struct FailureNotice {
  int rank = -1;
  uint64_t version = 0;
  std::string how;  // "exit code 3", "signal 9 (Killed)"
};

// The departed set plus its monotone version. Every rank derives trees from
// (rank set, departed set, radix) and never from anything a peer told it.
struct FailureView {
  std::set<int> departed;
  uint64_t version = 0;

  // Applies a notice; stale notices (version <= current) are ignored.
  // Returns true if the view changed.
  bool apply(const FailureNotice& notice) {
    if (notice.version <= version) return false;
    departed.insert(notice.rank);
    version = notice.version;
    return true;
  }
  bool alive(int rank) const { return departed.count(rank) == 0; }
};

// A bootstrap is the PeerExchange the transport swaps its addresses over
// (allgather: every rank contributes one blob and gets all of them, indexed
// by rank; blocking, bounded by timeout_ms).
class Bootstrap : public PeerExchange {
 public:
  virtual std::string name() const = 0;
  // The transport this job runs on (transport/factory.hpp).
  virtual std::string transport_kind() const { return "ucx"; }
  virtual void barrier() = 0;

  // Cores the ranks on this host share, when the launcher knows it (it bound
  // each rank to one of them, so a rank's own affinity says 1); 0 otherwise.
  virtual int job_cores() const { return 0; }

  // A descriptor that becomes readable when failure notices arrive (-1 if
  // this bootstrap never delivers any), and a non-blocking read of them.
  virtual int notice_fd() const = 0;
  virtual std::vector<FailureNotice> poll_notices() = 0;
};

// Picks the backend from the environment: GROVE_JOB_RENDEZVOUS (set by
// `grove run`) selects `local`; otherwise `singleton`.
std::unique_ptr<Bootstrap> bootstrap_from_environment();

}  // namespace grove
