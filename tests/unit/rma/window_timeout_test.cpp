// Window operations through the transport whose target never answers
// (MemoryWorld::hold_rma): the call times out, and it does not return
// while the transport could still write the caller's buffer or apply the
// operation: it gives up on the connection first (rma/abandon.hpp), so a
// target that answers later performs nothing.

#include <gtest/gtest.h>

#include <cstring>

#include "core/params.hpp"
#include "rma/window_core.hpp"
#include "support/memory_world.hpp"
#include "support/world_group.hpp"

namespace grove::rma {
namespace {

using grove::testing::WorldGroups;

struct TimeoutRig {
  params::ScopedSet timeout{"timeout_ms", "50"};
  params::ScopedSet cancel_wait{"cancel_wait_ms", "20"};
  MemoryWorld world;
  WorldGroups groups;
  std::vector<std::unique_ptr<WindowCore>> windows;
  TimeoutRig()
      : world(2, MemoryWorld::Options{0, MemoryWorld::SendMode::eager, true, false}),
        groups(world) {
    windows = groups.construct_all<WindowCore>(
        [&](int r) { return std::make_unique<WindowCore>(groups.group(r), Datatype::int64, 4); });
    const int64_t values[4] = {1, 2, 3, 4};
    std::memcpy(windows[1]->local(), values, sizeof(values));
  }
  int64_t at_rank1(size_t i) {
    int64_t v = 0;
    std::memcpy(&v, windows[1]->local() + i * 8, 8);
    return v;
  }
  // The target answers at last; the issuer progresses.
  void release() {
    world.release_rma(1);
    for (int i = 0; i < 4; ++i)
      world.progress_all();
  }
};

std::string timeout_error_of(const std::function<void()>& f, Errc* code) {
  try {
    f();
  } catch (const Error& e) {
    *code = e.code();
    return e.what();
  }
  return "no error";
}

TEST(WindowTimeouts, AGetThatTimesOutNeverWritesTheBufferLater) {
  TimeoutRig rig;
  rig.world.hold_rma(1);
  int64_t out[4] = {-7, -7, -7, -7};
  Errc code = Errc::internal;
  const std::string error = timeout_error_of(
      [&] { rig.windows[0]->get(1, 0, reinterpret_cast<std::byte*>(out), 4); }, &code);
  EXPECT_EQ(code, Errc::timeout) << error;
  EXPECT_NE(error.find("rank 0: window(int64 x 4) get from rank 1"), std::string::npos) << error;
  EXPECT_EQ(error.find("could not be stopped"), std::string::npos) << error;
  rig.release();
  for (int64_t v : out)
    EXPECT_EQ(v, -7) << "the abandoned get wrote into the caller's buffer";
}

TEST(WindowTimeouts, AFetchingAtomicThatTimesOutIsNeverAppliedLater) {
  TimeoutRig rig;
  rig.world.hold_rma(1);
  const int64_t operand = 10;
  int64_t old = -7;
  Errc code = Errc::internal;
  const std::string error = timeout_error_of(
      [&] {
        rig.windows[0]->fetch_and_op(1, 2, reinterpret_cast<const std::byte*>(&operand),
                                     reinterpret_cast<std::byte*>(&old), ReduceOp::sum);
      },
      &code);
  EXPECT_EQ(code, Errc::timeout) << error;
  EXPECT_NE(error.find("fetch_and_op at rank 1"), std::string::npos) << error;
  EXPECT_EQ(error.find("could not be stopped"), std::string::npos) << error;
  rig.release();
  EXPECT_EQ(old, -7);
  EXPECT_EQ(rig.at_rank1(2), 3) << "the abandoned atomic was applied after the call threw";
}

TEST(WindowTimeouts, APutThatTimesOutNeverReadsTheBufferLater) {
  TimeoutRig rig;
  rig.world.hold_rma(1);
  int64_t values[2] = {50, 60};
  Errc code = Errc::internal;
  const std::string error = timeout_error_of(
      [&] { rig.windows[0]->put(1, 1, reinterpret_cast<const std::byte*>(values), 2); }, &code);
  EXPECT_EQ(code, Errc::timeout) << error;
  EXPECT_EQ(error.find("could not be stopped"), std::string::npos) << error;
  values[0] = values[1] = 99;  // the caller reuses its buffer after the throw
  rig.release();
  EXPECT_EQ(rig.at_rank1(1), 2);
  EXPECT_EQ(rig.at_rank1(2), 3);
}

}  // namespace
}  // namespace grove::rma
