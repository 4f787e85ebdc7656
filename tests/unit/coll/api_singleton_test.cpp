// The public API on a singleton Session (no launcher: size 1, UCX to itself).

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/params.hpp"
#include "grove/grove.hpp"

namespace grove {
namespace {

Session& session() {
  static Session s;
  return s;
}

std::string message_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& e) {
    return std::string(errc_name(e.code())) + ": " + e.what();
  }
  return "no error";
}

TEST(ApiSingleton, WorldIsOneRank) {
  EXPECT_EQ(session().rank(), 0);
  EXPECT_EQ(session().size(), 1);
  EXPECT_EQ(session().world().size(), 1);
  EXPECT_TRUE(session().departed().empty());
}

TEST(ApiSingleton, RootOutOfRangeIsNamed) {
  std::vector<std::byte> buffer(4);
  const std::string message = message_of([&] { session().world().bcast(std::span(buffer), 1); });
  EXPECT_NE(message.find("invalid argument"), std::string::npos) << message;
  EXPECT_NE(message.find("root 1 is out of range for 1 ranks"), std::string::npos) << message;
  EXPECT_NE(message_of([&] { session().world().bcast(std::span(buffer), -1); }).find("root -1"),
            std::string::npos);
}

TEST(ApiSingleton, UnknownAlgorithmIsNamed) {
  const std::string message =
      message_of([] { params::ScopedSet bad("bcast_algorithm", "no_such_tree"); });
  EXPECT_NE(message.find("bcast_algorithm"), std::string::npos) << message;
  EXPECT_NE(message.find("no_such_tree"), std::string::npos) << message;
}

TEST(ApiSingleton, BlockingNonBlockingAndPersistentForms) {
  Comm& world = session().world();
  std::vector<int> values{1, 2, 3};
  world.bcast(std::span(values), 0);
  Request request = world.ibcast(std::span(values), 0);
  request.wait();
  EXPECT_TRUE(request.test());
  EXPECT_EQ(values, (std::vector<int>{1, 2, 3}));

  Persistent persistent = world.bcast_init(std::as_writable_bytes(std::span(values)), 0);
  for (int i = 0; i < 100; ++i) {
    persistent.start();
    persistent.wait();
  }
  Persistent barrier = world.barrier_init();
  for (int i = 0; i < 100; ++i) {
    barrier.start();
    barrier.wait();
  }
  EXPECT_EQ(values, (std::vector<int>{1, 2, 3}));
}

TEST(ApiSingleton, EmptyRequestIsComplete) {
  Request empty;
  EXPECT_TRUE(empty.test());
  empty.wait();
  Persistent none;
  EXPECT_THROW(none.start(), Error);
}

}  // namespace
}  // namespace grove
