#pragma once
// rma::Group over a communicator: what windows and rings use of a Comm
// (its transport, failure notices, allgather and barrier).

#include <memory>

#include "api/comm_state.hpp"
#include "rma/group.hpp"

namespace grove::detail {

std::shared_ptr<rma::Group> make_rma_group(const std::shared_ptr<CommState>& comm);

}  // namespace grove::detail
