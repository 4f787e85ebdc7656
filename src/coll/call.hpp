#pragma once
// What every collective's front end does before it starts: validate the
// arguments, resolve the algorithm (forced parameter or `auto`), find or
// build the schedule, and wrap it in an Operation.

#include <functional>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "coll/algorithm.hpp"
#include "coll/comm_state.hpp"
#include "coll/operation.hpp"
#include "grove/error.hpp"

namespace grove::detail {

// Throws grove::Error(invalid_argument) "rank R: COLL: root X is out of range for N ranks".
void check_root(const CommState& comm, std::string_view collective, int root);

// Throws grove::Error(invalid_argument) naming the buffer and both lengths.
void check_length(const CommState& comm, std::string_view collective, std::string_view buffer,
                  size_t have, size_t need);

// The schedule for `key`, built by `build` on a cache miss.
std::shared_ptr<const sched::Schedule> cached_schedule(CommState& comm, const std::string& key,
                                                       const std::function<sched::Schedule()>& build);

// Parses the value of a `<collective>_algorithm` parameter, remembering the
// last text so repeated calls do not parse again.
coll::AlgorithmSpec forced_algorithm(std::string_view collective, const std::string& text);

}  // namespace grove::detail
