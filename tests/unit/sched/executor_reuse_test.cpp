// Executions made and dropped once per call reuse pooled states (see
// Execution::State::take): a reused state must behave exactly like a new one.

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "sched/executor.hpp"
#include "support/memory_world.hpp"
#include "support/schedule_parts.hpp"

namespace grove::sched {
namespace {

const Tag kReuseBase = tag::make(5, 1, tag::Topology::none, 9, 0);

// Rank 0 sends `bytes` bytes to rank 1, which copies the first half of what
// it got over the second half.
struct Transfer {
  std::shared_ptr<const Schedule> sender, receiver;
  explicit Transfer(size_t bytes) {
    Builder s;
    s.send(1, in(0, bytes));
    sender = share(s, "send");
    Builder r;
    auto got = r.recv(0, out(0, bytes));
    r.copy(out(0, bytes / 2), out(bytes / 2, bytes / 2), {got});
    receiver = share(r, "recv");
  }
};

void run_transfer(MemoryWorld& world, const Transfer& t, std::vector<std::byte>& input,
                  std::vector<std::byte>& output, uint32_t sequence) {
  const Tag tag = tag::make(5, sequence, tag::Topology::none, 9, 0);
  Execution s(world.transport(0), t.sender, Buffers{input.data(), input.size()}, tag);
  Execution r(world.transport(1), t.receiver, Buffers{nullptr, 0, output.data(), output.size()},
              tag);
  s.start();
  r.start();
  world.run_until([&] { return s.done() && r.done(); }, 1000);
  ASSERT_FALSE(s.error());
  ASSERT_FALSE(r.error());
}

TEST(ExecutorReuse, RepeatedExecutionsWithNewBuffersStayCorrect) {
  MemoryWorld world(2);
  const Transfer small(8), large(32);
  for (uint32_t i = 0; i < 50; ++i) {
    const Transfer& t = i % 3 == 0 ? large : small;  // alternate schedules
    const size_t bytes = &t == &large ? 32 : 8;
    std::vector<std::byte> input(bytes), output(bytes);
    for (size_t b = 0; b < bytes; ++b)
      input[b] = static_cast<std::byte>(i + b);
    run_transfer(world, t, input, output, i);
    for (size_t b = 0; b < bytes / 2; ++b) {
      ASSERT_EQ(output[b], input[b]) << "call " << i << " byte " << b;
      ASSERT_EQ(output[bytes / 2 + b], input[b]) << "call " << i << " byte " << bytes / 2 + b;
    }
  }
}

TEST(ExecutorReuse, AReusedStateValidatesOtherBufferLengthsAgain) {
  MemoryWorld world(2);
  const Transfer t(8);
  std::vector<std::byte> output(8), short_output(4);
  {
    Execution fine(world.transport(1), t.receiver, Buffers{nullptr, 0, output.data(), 8},
                   kReuseBase);
  }
  // Same schedule, shorter buffer: the pooled state prepared for 8 bytes
  // must not skip the check.
  EXPECT_THROW(Execution(world.transport(1), t.receiver,
                         Buffers{nullptr, 0, short_output.data(), 4}, kReuseBase),
               Error);
  // Same schedule, missing buffer.
  EXPECT_THROW(
      Execution(world.transport(1), t.receiver, Buffers{nullptr, 0, nullptr, 8}, kReuseBase),
      Error);
  // And a correct one still runs after the failures.
  std::vector<std::byte> input(8, std::byte{5});
  run_transfer(world, t, input, output, 77);
  EXPECT_EQ(output[7], std::byte{5});
}

TEST(ExecutorReuse, AReusedStateChecksPeersOfAnotherWorldSize) {
  MemoryWorld four(4);
  Builder b;
  b.send(3, in(0, 1));
  auto to_rank_3 = share(b, "to 3");
  std::vector<std::byte> input(1);
  { Execution ok(four.transport(0), to_rank_3, Buffers{input.data(), 1}, kReuseBase); }
  MemoryWorld two(2);
  EXPECT_THROW(Execution(two.transport(0), to_rank_3, Buffers{input.data(), 1}, kReuseBase), Error);
}

}  // namespace
}  // namespace grove::sched
