#include "coll/call.hpp"

#include <map>
#include <mutex>

namespace grove::detail {

void check_root(const CommState& comm, std::string_view collective, int root) {
  if (root < 0 || root >= comm.size()) {
    throw Error(Errc::invalid_argument,
                fmt::format("rank {}: {}: root {} is out of range for {} ranks", comm.rank(),
                            collective, root, comm.size()));
  }
}

void check_length(const CommState& comm, std::string_view collective, std::string_view buffer,
                  size_t have, size_t need) {
  if (have != need) {
    throw Error(Errc::invalid_argument,
                fmt::format("rank {}: {}: {} holds {} bytes, the call needs {}", comm.rank(),
                            collective, buffer, have, need));
  }
}

std::shared_ptr<const sched::Schedule> cached_schedule(
    CommState& comm, const std::string& key, const std::function<sched::Schedule()>& build) {
  if (auto found = comm.cache.find(key)) return found;
  auto schedule = std::make_shared<const sched::Schedule>(build());
  comm.cache.insert(key, schedule);
  return schedule;
}

coll::AlgorithmSpec forced_algorithm(std::string_view collective, const std::string& text) {
  static std::mutex mutex;
  static std::map<std::pair<std::string, std::string>, coll::AlgorithmSpec> parsed;
  std::lock_guard lock(mutex);
  auto key = std::make_pair(std::string(collective), text);
  auto it = parsed.find(key);
  if (it == parsed.end()) {
    it = parsed.emplace(std::move(key), coll::parse_algorithm(collective, text)).first;
  }
  return it->second;
}

}  // namespace grove::detail
