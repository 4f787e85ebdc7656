#pragma once
// grove::Session: one per process. Construction finds the other ranks (under
// `grove run`, or as a singleton of size 1 without a launcher), reads the
// parameters (GROVE_* environment, GROVE_PARAMS_FILE, `grove run --param`)
// and connects the transport; destruction waits for every rank (a barrier)
// and disconnects.

#include <cstdint>
#include <memory>
#include <set>

#include "grove/comm.hpp"

namespace grove {

namespace detail {
struct SessionState;
}

class Session {
 public:
  Session();
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  int rank() const;
  int size() const;
  Comm& world();

  // Ranks reported as departed (grove run --on-failure=notify; under a PMIx
  // launcher its events and the bootstrap's watch, docs/cluster.md), and the
  // monotone version of that view.
  std::set<int> departed() const;
  uint64_t failure_version() const;

  detail::SessionState& state() const { return *state_; }

 private:
  std::unique_ptr<detail::SessionState> state_;
  std::unique_ptr<Comm> world_;
};

}  // namespace grove
