#pragma once
// What every collective's front end does before it starts: validate the
// arguments, find the call's plan (algorithm, stamp, schedule) by its shape,
// and wrap it with the call's buffers in an Operation.
//
// Cost of a repeated call of one shape, after warm-up: a hash lookup, one
// Operation in recycled memory and one pooled execution state; nothing is
// parsed, formatted or allocated (names for errors are made only when an
// error is reported).

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "api/call_plan.hpp"
#include "api/comm_state.hpp"
#include "api/operation.hpp"
#include "coll/algorithm.hpp"
#include "core/function_ref.hpp"
#include "grove/error.hpp"
#include "grove/request.hpp"

namespace grove::detail {

// Throws grove::Error(invalid_argument) "rank R: COLL: root X is out of range for N ranks".
void check_root(const CommState& comm, std::string_view collective, int root);

// Throws grove::Error(invalid_argument) naming the buffer and both lengths.
void check_length(const CommState& comm, std::string_view collective, std::string_view buffer,
                  size_t have, size_t need);

// The plan for `shape` on `comm`: the cached one if it was resolved under the
// current parameters (params::generation), else a new one that `resolve`
// fills in (algorithm and stamp, schedule, describe; the shape, its lists and
// the generation are set here) and the cache keeps. `resolve` must depend
// only on the shape, the communicator and parameters. The reference is valid
// until the next plan_call on `comm`.
const std::shared_ptr<const CallPlan>& plan_call(CommState& comm, const CallShape& shape,
                                                 FunctionRef<void(CallPlan&)> resolve);

// A new Operation running `plan` on `buffers` (recycled memory).
std::shared_ptr<Operation> make_operation(const std::shared_ptr<CommState>& comm,
                                          std::shared_ptr<const CallPlan> plan,
                                          const sched::Buffers& buffers);

// The executor's view of a call's user buffers; an empty span stands for a
// buffer the call does not use on this rank (in place, or not the root).
sched::Buffers user_buffers(std::span<const std::byte> input, std::span<std::byte> output);

// Starts `operation` and hands it to the caller: the i* form of every
// collective.
Request start_request(std::shared_ptr<Operation> operation);

// Parses the value of a `<collective>_algorithm` parameter, remembering the
// last text so repeated calls do not parse again.
coll::AlgorithmSpec forced_algorithm(std::string_view collective, const std::string& text);

}  // namespace grove::detail
