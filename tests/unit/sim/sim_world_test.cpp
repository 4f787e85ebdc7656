// The simulator core through direct Transport send/recv: timing of each
// model stage, NIC serialisation, matching semantics, determinism and
// conservation. Every run is a handful of events: bounded in time.

#include "transport/sim/sim_world.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "grove/error.hpp"

namespace grove::sim {
namespace {

// Records one completion and the virtual time it happened at.
struct WorldCompletion {
  SimWorld* world = nullptr;
  bool called = false;
  int calls = 0;
  Status status;
  Time at = -1;
  static void fn(void* context, const Status& status) {
    auto* c = static_cast<WorldCompletion*>(context);
    c->called = true;
    c->calls++;
    c->status = status;
    c->at = c->world->now();
  }
};

void ignore_completion(void*, const Status&) {}

// A simple Hockney configuration: 1 ns a byte (8 Gbit/s), round numbers.
SimConfig simple_config() {
  SimConfig c;
  c.alpha_us = 10;
  c.copy_us = 2;
  c.threads = 1;
  c.bandwidth_gbps = 8;
  return c;
}

std::vector<std::byte> pattern(size_t n, int seed) {
  std::vector<std::byte> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<std::byte>((i * 31 + static_cast<size_t>(seed) * 7) & 0xff);
  return v;
}

TEST(SimWorld, OneMessageCostsCopyWireAndLatency) {
  SimWorld world(2, simple_config());
  auto data = pattern(1000, 1);
  std::vector<std::byte> out(1000);
  WorldCompletion sent{&world}, got{&world};
  world.transport(1).recv(0, 7, out.data(), out.size(), &WorldCompletion::fn, &got);
  world.transport(0).send(1, 7, data.data(), data.size(), &WorldCompletion::fn, &sent);
  world.run();
  ASSERT_TRUE(sent.called && got.called);
  EXPECT_TRUE(got.status.ok);
  EXPECT_EQ(got.status.length, 1000u);
  EXPECT_EQ(out, data);
  // c = 2 us, m/B = 1000 ns, alpha = 10 us.
  EXPECT_EQ(sent.at, from_micros(3));
  EXPECT_EQ(got.at, from_micros(13));
  EXPECT_EQ(sent.calls, 1);
  EXPECT_EQ(got.calls, 1);
}

TEST(SimWorld, BurstSoftwareCostIsCeilOfCopiesOverThreads) {
  for (int threads : {1, 3, 8}) {
    SimConfig c = simple_config();
    c.threads = threads;
    c.alpha_us = 0;
    const int r = 10;
    SimWorld world(r + 1, c);
    std::vector<WorldCompletion> got(r, WorldCompletion{&world});
    for (int i = 0; i < r; ++i) {
      world.transport(i + 1).recv(0, 1, nullptr, 0, &WorldCompletion::fn, &got[i]);
      world.transport(0).send(i + 1, 1, nullptr, 0, &ignore_completion, nullptr);
    }
    world.run();
    Time last = 0;
    for (auto& g : got)
      last = std::max(last, g.at);
    EXPECT_EQ(last, from_micros(2.0 * ((r + threads - 1) / threads))) << "threads " << threads;
  }
}

TEST(SimWorld, CopiesFromOneNodeSerialiseOnItsNic) {
  // r copies of M bytes from one node to r nodes: r * M / B of wire time,
  // back to back, however many threads issued them and however many ranks
  // of the node did.
  const int r = 6;
  const size_t m = 4000;  // 4 us each at 8 Gbit/s
  for (int ranks_per_node : {1, 2}) {
    SimConfig c = simple_config();
    c.threads = 16;
    c.copy_us = 0;
    c.ranks_per_node = ranks_per_node;
    c.data = DataMode::sizes;
    const int n = ranks_per_node + r * ranks_per_node;
    SimWorld world(n, c);
    TraceVector trace;
    world.set_trace(&trace);
    for (int i = 0; i < r; ++i) {
      const int dst = (i + 1) * ranks_per_node;
      const int src = i % ranks_per_node;  // the node's ranks take turns
      world.transport(dst).recv(src, 3, nullptr, m, &ignore_completion, nullptr);
      world.transport(src).send(dst, 3, nullptr, m, &ignore_completion, nullptr);
    }
    world.run();
    ASSERT_EQ(trace.records.size(), static_cast<size_t>(r));
    std::vector<Time> wires;
    for (const auto& rec : trace.records)
      wires.push_back(rec.wire);
    std::sort(wires.begin(), wires.end());
    for (int i = 0; i < r; ++i)
      EXPECT_EQ(wires[static_cast<size_t>(i)], i * from_micros(4)) << "copy " << i;
    Time last = 0;
    for (const auto& rec : trace.records)
      last = std::max(last, rec.delivered);
    EXPECT_EQ(last, r * from_micros(4) + from_micros(10));  // r*M/B + alpha
  }
}

TEST(SimWorld, IngressSerialisesArrivalsAtOneNode) {
  SimConfig c = simple_config();
  c.copy_us = 0;
  const int r = 5;
  SimWorld world(r + 1, c);
  std::vector<WorldCompletion> got(r, WorldCompletion{&world});
  std::vector<std::vector<std::byte>> in(r, std::vector<std::byte>(2000));
  auto data = pattern(2000, 3);
  for (int i = 0; i < r; ++i) {
    world.transport(0).recv(i + 1, 0, in[i].data(), 2000, &WorldCompletion::fn, &got[i]);
    world.transport(i + 1).send(0, 0, data.data(), 2000, &ignore_completion, nullptr);
  }
  world.run();
  std::vector<Time> at;
  for (auto& g : got)
    at.push_back(g.at);
  std::sort(at.begin(), at.end());
  for (int i = 0; i < r; ++i)
    EXPECT_EQ(at[static_cast<size_t>(i)], from_micros(10) + (i + 1) * from_micros(2));
}

TEST(SimWorld, BlockingSendsAreSinglePort) {
  // overlap = false, t = 1, alpha = 0: each send costs c + M/B in turn, the
  // single-port Hockney assumption.
  SimConfig c = simple_config();
  c.overlap = false;
  c.alpha_us = 0;
  c.data = DataMode::sizes;
  const int r = 4;
  SimWorld world(r + 1, c);
  std::vector<WorldCompletion> got(r, WorldCompletion{&world});
  for (int i = 0; i < r; ++i) {
    world.transport(i + 1).recv(0, 0, nullptr, 3000, &WorldCompletion::fn, &got[i]);
    world.transport(0).send(i + 1, 0, nullptr, 3000, &ignore_completion, nullptr);
  }
  world.run();
  for (int i = 0; i < r; ++i)
    EXPECT_EQ(got[static_cast<size_t>(i)].at, (i + 1) * from_micros(5));
}

}  // namespace
}  // namespace grove::sim
