#include "api/comm_state.hpp"

#include <algorithm>

namespace grove::detail {

int CommState::recompute_first_departed() {
  const FailureView& view = session->failures;
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
