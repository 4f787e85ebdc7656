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

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string name() const = 0;

  // Every rank contributes one blob and gets all of them, indexed by rank.
  // Blocking, bounded by timeout_ms; throws grove::Error naming the cause.
  virtual std::vector<Blob> allgather(std::span<const std::byte> mine) = 0;
  virtual void barrier() = 0;

  // A descriptor that becomes readable when failure notices arrive (-1 if
  // this bootstrap never delivers any), and a non-blocking read of them.
  virtual int notice_fd() const = 0;
  virtual std::vector<FailureNotice> poll_notices() = 0;
};

// Picks the backend from the environment: GROVE_JOB_RENDEZVOUS (set by
// `grove run`) selects `local`; otherwise `singleton`.
std::unique_ptr<Bootstrap> bootstrap_from_environment();

}  // namespace grove
