#include "api/comm_state.hpp"

#include <algorithm>

namespace grove::detail {

int CommState::first_departed() {
  if (session == nullptr) return -1;
  const FailureView& view = session->failures;
  if (view.version == departed_version_) return first_departed_;
  departed_version_ = view.version;
  first_departed_ = -1;
  for (int gone : session->departure_order) {
    if (world_ranks.empty()) {
      if (gone < size()) first_departed_ = gone;
    } else {
      const auto it = std::find(world_ranks.begin(), world_ranks.end(), gone);
      if (it != world_ranks.end()) first_departed_ = static_cast<int>(it - world_ranks.begin());
    }
    if (first_departed_ >= 0) break;
  }
  return first_departed_;
}

bool CommState::departed(int member) const {
  return session != nullptr && session->failures.departed.count(world_rank(member)) != 0;
}

}  // namespace grove::detail
