#pragma once
// What the receive-queue tests share: two completion functions to tell
// receives apart, and the field-by-field comparison of a receive with the
// reference container's.

#include <gtest/gtest.h>

#include "transport/sim/recv_queue.hpp"

namespace grove::sim::recv_checks {

inline void done_a(void*, const Status&) {}
inline void done_b(void*, const Status&) {}

// `op`: the step of the operation sequence, for the failure message.
inline void expect_same(const PostedRecv& got, const PostedRecv& want, int op) {
  ASSERT_EQ(got.context, want.context) << op;
  ASSERT_EQ(got.data, want.data) << op;
  ASSERT_EQ(got.capacity, want.capacity) << op;
  ASSERT_EQ(got.done, want.done) << op;
  ASSERT_EQ(got.tag, want.tag) << op;
}

}  // namespace grove::sim::recv_checks
