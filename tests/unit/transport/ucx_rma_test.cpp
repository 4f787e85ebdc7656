// UCX transport, one-sided access between forked ranks: regions, keys,
// mappings on one host, put/get/atomics/flush through UCX (shared memory
// with rma_direct off, and TCP), concurrent atomics, bad keys.

#include <gtest/gtest.h>

#include <cstring>

#include "core/params.hpp"
#include "fork_ranks.hpp"
#include "transport/ucx/ucx_transport.hpp"

namespace grove::testing {
namespace {

struct Attached {
  std::unique_ptr<RmaRegion> region;
  std::vector<std::unique_ptr<RmaTarget>> targets;
};

Attached attach_all(ForkBootstrap& bootstrap, Transport& transport, size_t bytes) {
  Attached a;
  a.region = transport.rma_allocate(bytes);
  EXPECT_EQ(a.region->size(), bytes);
  for (size_t i = 0; i < bytes; ++i)
    EXPECT_EQ(a.region->data()[i], std::byte{0}) << "byte " << i << " not zeroed";
  const auto keys = bootstrap.allgather(a.region->key());
  for (int r = 0; r < transport.size(); ++r)
    a.targets.push_back(transport.rma_attach(r, keys[static_cast<size_t>(r)]));
  return a;
}

bool run_to_completion(Transport& transport, Completed& c) {
  return wait_for(transport, [&] { return c.count > 0; }) && c.status.ok;
}

// A fetching atomic (add, cswap); the previous value.
uint64_t atomic_op(Transport& transport, RmaTarget& target, size_t offset, RmaAtomicOp op,
                   uint8_t width, uint64_t operand, uint64_t compare = 0) {
  uint64_t fetched = 0xdeadbeef;
  RmaAtomic a;
  a.op = op;
  a.width = width;
  a.operand = operand;
  a.compare = compare;
  a.fetch = &fetched;
  Completed c;
  transport.rma_atomic(target, offset, a, &Completed::fn, &c);
  EXPECT_TRUE(run_to_completion(transport, c));
  return fetched;
}

// A posted atomic, then the word as a fetch-add of zero reads it.
uint64_t post_then_read(Transport& transport, RmaTarget& target, size_t offset, RmaAtomicOp op,
                        uint8_t width, uint64_t operand) {
  RmaAtomic a;
  a.op = op;
  a.width = width;
  a.operand = operand;
  Completed c;
  transport.rma_atomic(target, offset, a, &Completed::fn, &c);
  EXPECT_TRUE(run_to_completion(transport, c));
  return atomic_op(transport, target, offset, RmaAtomicOp::add, width, 0);
}

// Rank r puts its pattern into rank r+1's region at offset 8, gets it back,
// then runs every atomic on rank 0's words: exact values throughout.
void put_get_atomics(ForkBootstrap& bootstrap, bool expect_mapped) {
  auto transport = make_ucx_transport(bootstrap);
  const int me = transport->rank();
  const int n = transport->size();
  Attached a = attach_all(bootstrap, *transport, 1 << 16);
  const int next = (me + 1) % n;
  if (n > 1) {
    EXPECT_EQ(a.targets[static_cast<size_t>(next)]->mapped() != nullptr, expect_mapped);
  }

  const auto out = pattern(me, next, 1, 40000);
  Completed put;
  transport->rma_put(*a.targets[static_cast<size_t>(next)], 8, out.data(), out.size(),
                     &Completed::fn, &put);
  ASSERT_TRUE(run_to_completion(*transport, put));
  Completed flushed;
  transport->rma_flush(next, &Completed::fn, &flushed);
  ASSERT_TRUE(run_to_completion(*transport, flushed));
  transport_barrier(*transport);
  const int prev = (me + n - 1) % n;
  EXPECT_EQ(std::memcmp(a.region->data() + 8, pattern(prev, me, 1, 40000).data(), 40000), 0)
      << "rank " << me << ": rank " << prev << "'s put did not land";
  std::vector<std::byte> back(40000);
  Completed got;
  transport->rma_get(*a.targets[static_cast<size_t>(next)], 8, back.data(), back.size(),
                     &Completed::fn, &got);
  ASSERT_TRUE(run_to_completion(*transport, got));
  EXPECT_TRUE(back == out) << "rank " << me << ": get returned other bytes";
  transport_barrier(*transport);

  // Rank 0 runs them on the last rank's words (its own in a job of one).
  const int owner = n - 1;
  if (me == 0) {
    RmaTarget& t = *a.targets[static_cast<size_t>(owner)];
    for (uint8_t width : {uint8_t{4}, uint8_t{8}}) {
      const size_t at = width == 4 ? 48000 : 48008;
      EXPECT_EQ(atomic_op(*transport, t, at, RmaAtomicOp::add, width, 5), 0u);
      EXPECT_EQ(atomic_op(*transport, t, at, RmaAtomicOp::add, width, 7), 5u);
      EXPECT_EQ(post_then_read(*transport, t, at, RmaAtomicOp::bor, width, 0xf0), 0xfcu);
      EXPECT_EQ(post_then_read(*transport, t, at, RmaAtomicOp::band, width, 0x3c), 0x3cu);
      EXPECT_EQ(post_then_read(*transport, t, at, RmaAtomicOp::bxor, width, 0xff), 0xc3u);
      EXPECT_EQ(post_then_read(*transport, t, at, RmaAtomicOp::add, width, 1), 0xc4u);
      // A compare that fails leaves the word; one that holds replaces it.
      EXPECT_EQ(atomic_op(*transport, t, at, RmaAtomicOp::cswap, width, 7, 99), 0xc4u);
      EXPECT_EQ(atomic_op(*transport, t, at, RmaAtomicOp::cswap, width, 7, 0xc4), 0xc4u);
      EXPECT_EQ(atomic_op(*transport, t, at, RmaAtomicOp::add, width, 0), 7u);
    }
    // The high half of an 8-byte word: carries and wide operands.
    const uint64_t wide = (uint64_t{1} << 40) + 3;
    EXPECT_EQ(atomic_op(*transport, t, 48016, RmaAtomicOp::add, 8, wide), 0u);
    EXPECT_EQ(atomic_op(*transport, t, 48016, RmaAtomicOp::add, 8, wide), wide);
    Completed flushed_atomics;
    transport->rma_flush(owner, &Completed::fn, &flushed_atomics);
    EXPECT_TRUE(run_to_completion(*transport, flushed_atomics));
  }
  transport_barrier(*transport);
  if (me == owner) {
    uint64_t word = 0;
    std::memcpy(&word, a.region->data() + 48016, 8);
    EXPECT_EQ(word, 2 * ((uint64_t{1} << 40) + 3));
    uint32_t narrow = 0;
    std::memcpy(&narrow, a.region->data() + 48000, 4);
    EXPECT_EQ(narrow, 7u);
  }
  transport_barrier(*transport);
}

TEST(UcxRma, MappedOnOneHost) {
  for (int ranks = 1; ranks <= 3; ++ranks) {
    SCOPED_TRACE(ranks);
    expect_all_exited_zero(run_ranks(ranks, [](ForkBootstrap& b) { put_get_atomics(b, true); }));
  }
}

TEST(UcxRma, ThroughUcxWithoutMapping) {
  expect_all_exited_zero(run_ranks(3, [](ForkBootstrap& b) {
    params::ScopedSet direct("rma_direct", "false");
    put_get_atomics(b, false);
  }));
}

TEST(UcxRma, OverTcp) {
  expect_all_exited_zero(run_ranks(2, [](ForkBootstrap& b) {
    params::ScopedSet tls("ucx_tls", "tcp,self");
    put_get_atomics(b, false);
  }));
}

// Every rank adds 1 to one word of rank 0, 2000 times, through UCX; no
// update is lost.
TEST(UcxRma, ConcurrentAtomicAdds) {
  expect_all_exited_zero(run_ranks(4, [](ForkBootstrap& b) {
    params::ScopedSet direct("rma_direct", "false");
    auto transport = make_ucx_transport(b);
    Attached a = attach_all(b, *transport, 64);
    transport_barrier(*transport);
    constexpr int kAdds = 2000;
    int done = 0;
    std::vector<Completed> completions(kAdds);
    for (int i = 0; i < kAdds; ++i) {
      RmaAtomic add;
      add.op = RmaAtomicOp::add;
      add.width = 8;
      add.operand = 1;
      transport->rma_atomic(*a.targets[0], 0, add, &Completed::fn,
                            &completions[static_cast<size_t>(i)]);
    }
    Completed flushed;
    transport->rma_flush(0, &Completed::fn, &flushed);
    ASSERT_TRUE(run_to_completion(*transport, flushed));
    for (const Completed& c : completions) {
      EXPECT_EQ(c.count, 1);
      EXPECT_TRUE(c.status.ok);
      done += c.count;
    }
    EXPECT_EQ(done, kAdds);
    transport_barrier(*transport);
    if (transport->rank() == 0) {
      uint64_t word = 0;
      std::memcpy(&word, a.region->data(), 8);
      EXPECT_EQ(word, uint64_t{4} * kAdds);
    }
    transport_barrier(*transport);
  }));
}

TEST(UcxRma, BadKeysAndRangesThrow) {
  expect_all_exited_zero(run_ranks(1, [](ForkBootstrap& b) {
    auto transport = make_ucx_transport(b);
    EXPECT_TRUE(transport->supports_rma());
    const std::byte short_key[4] = {};
    try {
      transport->rma_attach(0, short_key);
      ADD_FAILURE() << "a 4-byte key was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::protocol);
      EXPECT_NE(std::string(e.what()).find("too short"), std::string::npos) << e.what();
    }
    auto region = transport->rma_allocate(16);
    auto target = transport->rma_attach(0, region->key());
    std::byte buffer[32] = {};
    Completed c;
    EXPECT_THROW(transport->rma_put(*target, 8, buffer, 16, &Completed::fn, &c), Error);
    EXPECT_THROW(transport->rma_get(*target, 17, buffer, 0, &Completed::fn, &c), Error);
    RmaAtomic misaligned;
    misaligned.width = 8;
    EXPECT_THROW(transport->rma_atomic(*target, 4, misaligned, &Completed::fn, &c), Error);
    // Fetching and/or/xor are not offered (see transport.hpp).
    uint64_t fetched = 0;
    RmaAtomic fetch_or;
    fetch_or.op = RmaAtomicOp::bor;
    fetch_or.fetch = &fetched;
    EXPECT_THROW(transport->rma_atomic(*target, 0, fetch_or, &Completed::fn, &c), Error);
    RmaAtomic cswap_without_fetch;
    cswap_without_fetch.op = RmaAtomicOp::cswap;
    EXPECT_THROW(transport->rma_atomic(*target, 0, cswap_without_fetch, &Completed::fn, &c), Error);
    EXPECT_EQ(c.count, 0);
  }));
}

}  // namespace
}  // namespace grove::testing
