#pragma once
// What a Comm and a Session hold, shared by every collective's front end.

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <string>

#include "bootstrap/bootstrap.hpp"
#include "sched/schedule.hpp"
#include "transport/transport.hpp"

namespace grove::runtime {
class FenceEngine;
}

namespace grove::detail {

struct SessionState {
  std::unique_ptr<Bootstrap> bootstrap;
  std::unique_ptr<Transport> transport;  // world ranks
  FailureView failures;
  // The next context id this process may use. A new communicator takes the
  // maximum of its members' values, and every member moves past it: so two
  // communicators that share a rank never share a context id.
  uint32_t next_context = 1;
  double last_failure_poll = -1;  // transport time of the last notice poll

  // Reads pending failure notices (non-blocking) into `failures`.
  void poll_failures();
};

// Schedules by the shape of the call, so a repeated call builds nothing.
// Bounded (parameter schedule_cache_size); least recently used goes first.
class ScheduleCache {
 public:
  std::shared_ptr<const sched::Schedule> find(const std::string& key);
  void insert(const std::string& key, std::shared_ptr<const sched::Schedule> schedule);
  size_t size() const { return entries_.size(); }
  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }

 private:
  using Lru = std::list<std::pair<std::string, std::shared_ptr<const sched::Schedule>>>;
  Lru lru_;
  std::map<std::string, Lru::iterator, std::less<>> entries_;
  uint64_t hits_ = 0;
  uint64_t misses_ = 0;
};

struct CommState {
  SessionState* session = nullptr;
  Transport* transport = nullptr;         // addresses ranks of this communicator
  std::unique_ptr<Transport> owned_view;  // the rank-mapping view of a sub-communicator
  uint32_t context = 0;
  uint32_t next_sequence = 0;  // 16 bits on the wire; wraps
  ScheduleCache cache;
  // The reliable fence of this communicator (src/runtime/), made by the
  // first Comm::fence; replaced between fences if its parameters change.
  std::shared_ptr<runtime::FenceEngine> fence;

  int rank() const { return transport->rank(); }
  int size() const { return transport->size(); }
};

}  // namespace grove::detail
