#pragma once
// Short spellings for hand-built schedules in the executor's unit tests:
// regions of the output, input and scratch buffers, and a finished Builder
// shared under an algorithm name (what an Execution takes).

#include <cstddef>
#include <memory>

#include "sched/schedule.hpp"

namespace grove::sched {

inline Region out(size_t offset, size_t length) {
  return {Buffer::output, offset, length};
}
inline Region in(size_t offset, size_t length) {
  return {Buffer::input, offset, length};
}
inline Region scratch(size_t offset, size_t length) {
  return {Buffer::scratch, offset, length};
}

inline std::shared_ptr<const Schedule> share(Builder& b, const char* name) {
  b.schedule().algorithm = name;
  return std::make_shared<const Schedule>(b.finish());
}

}  // namespace grove::sched
