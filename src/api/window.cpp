// grove::RawWindow (include/grove/window.hpp) over rma::WindowCore.

#include <fmt/format.h>

#include "api/rma_group.hpp"
#include "grove/window.hpp"
#include "rma/window_core.hpp"

namespace grove {

namespace detail {
class WindowState {
 public:
  WindowState(const std::shared_ptr<CommState>& comm, Datatype type, size_t count)
      : core(make_rma_group(comm), type, count) {}
  rma::WindowCore core;
};
}  // namespace detail

namespace {

rma::WindowCore& core_of(const std::shared_ptr<detail::WindowState>& state, const char* call) {
  if (!state) {
    throw Error(Errc::invalid_argument,
                fmt::format("window {}: a default-constructed window has no memory", call));
  }
  return state->core;
}

}  // namespace

RawWindow::RawWindow(Comm& comm, Datatype type, size_t count)
    : state_(std::make_shared<detail::WindowState>(comm.state_ptr(), type, count)) {}

size_t RawWindow::size() const {
  return state_ ? state_->core.count() : 0;
}
Datatype RawWindow::type() const {
  return core_of(state_, "type").type();
}
std::byte* RawWindow::local() {
  return core_of(state_, "local").local();
}
void RawWindow::put(int rank, size_t index, const std::byte* values, size_t count) {
  core_of(state_, "put").put(rank, index, values, count);
}
void RawWindow::get(int rank, size_t index, std::byte* out, size_t count) {
  core_of(state_, "get").get(rank, index, out, count);
}
void RawWindow::accumulate(int rank, size_t index, const std::byte* values, size_t count,
                           ReduceOp op) {
  core_of(state_, "accumulate").accumulate(rank, index, values, count, op);
}
void RawWindow::fetch_and_op(int rank, size_t index, const std::byte* operand, std::byte* old,
                             ReduceOp op) {
  core_of(state_, "fetch_and_op").fetch_and_op(rank, index, operand, old, op);
}
void RawWindow::compare_and_swap(int rank, size_t index, const std::byte* expected,
                                 const std::byte* desired, std::byte* old) {
  core_of(state_, "compare_and_swap").compare_and_swap(rank, index, expected, desired, old);
}
void RawWindow::flush(int rank) {
  core_of(state_, "flush").flush(rank);
}
void RawWindow::flush_all() {
  core_of(state_, "flush_all").flush_all();
}
void RawWindow::close() {
  if (state_) state_->core.close();
}
std::string RawWindow::name() const {
  return state_ ? state_->core.name() : "window(empty)";
}

}  // namespace grove
