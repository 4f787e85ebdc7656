#include "grove/comm.hpp"

#include "api/comm_state.hpp"

namespace grove {

Comm::Comm(std::shared_ptr<detail::CommState> state) : state_(std::move(state)) {}
int Comm::rank() const {
  return state_->rank();
}
int Comm::size() const {
  return state_->size();
}

}  // namespace grove
