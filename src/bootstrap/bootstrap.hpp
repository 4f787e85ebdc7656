#pragma once
// How ranks find each other. A Bootstrap is a slow, reliable side channel
// used at start-up (exchanging transport addresses) and for failure notices.
// Backends: `local` (the rendezvous socket of `grove run`), `singleton`
// (size 1, no launcher), `pmix` (mpirun, prterun, srun --mpi=pmix; see
// docs/cluster.md).

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

// Which host each rank runs on. Hosts are numbered 0, 1, ... in the order of
// their lowest rank, so every rank derives the same numbering.
struct Hosts {
  std::vector<int> of_rank;        // host number of each rank
  std::vector<std::string> names;  // name of each host number

  // Numbers the hosts of `names_by_rank` (one name per rank).
  static Hosts from_names(const std::vector<std::string>& names_by_rank);
  int count() const { return static_cast<int>(names.size()); }
  // The ranks on `host`, ascending.
  std::vector<int> ranks_on(int host) const;
};

// A bootstrap is the PeerExchange the transport swaps its addresses over
// (allgather: every rank contributes one blob and gets all of them, indexed
// by rank; blocking, bounded by timeout_ms).
class Bootstrap : public PeerExchange {
 public:
  virtual std::string name() const = 0;
  // The transport this job runs on (transport/factory.hpp).
  virtual std::string transport_kind() const { return "ucx"; }

  // Where the ranks run: from the launcher (PMIx) or this host's name for
  // every rank (`grove run`, singleton). Fixed for the job.
  virtual const Hosts& hosts() const = 0;
  int host_of(int rank) const { return hosts().of_rank.at(static_cast<size_t>(rank)); }
  // The ranks that share this rank's host, ascending (this rank included).
  std::vector<int> local_peers() const { return hosts().ranks_on(host_of(rank())); }

  virtual void barrier() = 0;

  // Cores the ranks on this host share, when the launcher knows it (it bound
  // each rank to one of them, so a rank's own affinity says 1); 0 otherwise.
  virtual int job_cores() const { return 0; }

  // A descriptor that becomes readable when failure notices arrive (-1 if
  // this bootstrap never delivers any), and a non-blocking read of them.
  virtual int notice_fd() const = 0;
  virtual std::vector<FailureNotice> poll_notices() = 0;

  // The transport is connected: from here on the session needs the
  // bootstrap only for failure notices. A backend may then let go of its
  // launcher connection (pmix_detach); allgather() and barrier() then throw.
  virtual void started() {}
};

// Picks the backend from the environment: GROVE_JOB_RENDEZVOUS (set by
// `grove run`) selects `local`; else PMIx's variables (PMIX_NAMESPACE with
// PMIX_RANK, or a PMIX_SERVER_URI*) select `pmix`; otherwise `singleton`.
std::unique_ptr<Bootstrap> bootstrap_from_environment();

}  // namespace grove
