#pragma once
// A ring allgather of one fixed-size record per rank, for grove's own set-up
// exchanges (split's colors, the shared-memory segment's name): it runs on
// the schedule path whatever the allgather parameters say, at every size.

#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "api/comm_state.hpp"
#include "coll/shm/group.hpp"

namespace grove::detail {

// Every rank's `mine` lands in `all` (size() * mine.size() bytes) in rank
// order. Blocking; `what` names the exchange in errors.
void exchange_records(const std::shared_ptr<CommState>& comm, std::span<const std::byte> mine,
                      std::span<std::byte> all, std::string what);

template <class Record>
std::vector<Record> exchange_records(const std::shared_ptr<CommState>& comm, const Record& mine,
                                     std::string what) {
  static_assert(std::is_trivially_copyable_v<Record>);
  std::vector<Record> all(static_cast<size_t>(comm->size()));
  exchange_records(comm, std::as_bytes(std::span(&mine, 1)), std::as_writable_bytes(std::span(all)),
                   std::move(what));
  return all;
}

// The communicator's shared-memory segment (coll/shm/group.hpp), when its
// ranks share a host; null otherwise. Collective over `comm`.
std::shared_ptr<shm::Group> attach_shared_memory(const std::shared_ptr<CommState>& comm);

}  // namespace grove::detail
