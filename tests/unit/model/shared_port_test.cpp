// The forms on a shared port (coll/cost_terms.hpp): a rank's sends posted
// together share it, so the trees that fan out pay for every sibling. Exact
// values worked by hand with u(b) = b us per byte-unit and L = 1 us.
#include <gtest/gtest.h>

#include "coll/algorithm.hpp"
#include "coll/cost_terms.hpp"
#include "grove/error.hpp"
#include "model/cost.hpp"
#include "transport/sim/plogp_table.hpp"

namespace grove::model {
namespace {

coll::PortModel port(bool shared) {
  coll::PortModel m;
  m.u = [](double bytes) { return bytes; };
  m.w = m.u;
  m.lambda = 1;
  m.shared_port = shared;
  return m;
}

double form(const std::string& collective, const std::string& algorithm, int ranks, double bytes,
            bool shared) {
  const coll::AlgorithmSpec spec = coll::parse_algorithm(collective, algorithm);
  return closed_form(spec.collective, spec.name).cost({&spec, ranks, bytes}, port(shared));
}

TEST(SharedPort, EqualSendsPostedTogetherEndTogether) {
  // Binomial, 8 ranks, 10 units: the root's three sends end at 30 (arrive
  // 31); rank 4's two at 31 + 20 (arrive 52); rank 6's one at 62 (63).
  EXPECT_DOUBLE_EQ(form("bcast", "binomial", 8, 10, true), 63);
  EXPECT_DOUBLE_EQ(form("bcast", "binomial", 8, 10, false), 33);  // 3 u + 3 L
  // Binary heap of 4: the root's two end at 20 (21), rank 1's one at 31 (32).
  EXPECT_DOUBLE_EQ(form("bcast", "binary", 4, 10, true), 32);
  // kary:3 of 5: the root's three end at 30 (31), rank 1's child at 42.
  EXPECT_DOUBLE_EQ(form("bcast", "kary:3", 5, 10, true), 42);
  // knomial:4 of 16: the root's six (4, 8, 12, 1, 2, 3) end at 60 (61);
  // ranks 4, 8, 12 send three each: 61 + 30 + 1.
  EXPECT_DOUBLE_EQ(form("bcast", "knomial:4", 16, 10, true), 92);
}

TEST(SharedPort, UnequalSendsEndSmallestFirst) {
  // Binomial scatter of 4 blocks of 10: the root sends 20 to rank 2 and 10
  // to rank 1 together. Both get half the port until rank 1's ends at 20
  // (arrives 21); rank 2's last 10 end at 30 (31); rank 2 sends 10 to rank 3:
  // 31 + 10 + 1 = 42. A serial port sends the larger first: rank 2 has it at
  // 21 and rank 3 at 32.
  EXPECT_DOUBLE_EQ(form("scatter", "binomial", 4, 10, true), 42);
  EXPECT_DOUBLE_EQ(form("scatter", "binomial", 4, 10, false), 32);
  // scatter_allgather of 40 at 4 ranks (blocks of 10): that scatter, 42,
  // then the ring's 3 (u(10) + L) = 33.
  EXPECT_DOUBLE_EQ(form("bcast", "scatter_allgather", 4, 40, true), 75);
  // Blocks a byte apart: 20 bytes at 4 ranks (blocks of 5) scatter 10 to
  // rank 2 (its and rank 3's blocks) and 5 to rank 1: they end at 10 and 15
  // (arrive 11 and 16), rank 2 sends 5 to rank 3 (22); then the ring 3 (5 + 1).
  EXPECT_DOUBLE_EQ(form("bcast", "scatter_allgather", 4, 20, true), 22 + 18);
  // Blocks past the message's end are no message and are not waited for: 2
  // bytes at 4 ranks send rank 2 nothing, rank 1 its byte (arrives 2); the
  // ring 3 (1 + 1).
  EXPECT_DOUBLE_EQ(form("bcast", "scatter_allgather", 4, 2, true), 2 + 6);
}

TEST(SharedPort, FormsWithOneSendAtATimeDoNotChange) {
  for (const char* algorithm : {"flat", "chain", "pipeline:seg=4"}) {
    EXPECT_DOUBLE_EQ(form("bcast", algorithm, 7, 16, true), form("bcast", algorithm, 7, 16, false))
        << algorithm;
  }
  EXPECT_DOUBLE_EQ(form("scatter", "flat", 7, 16, true), form("scatter", "flat", 7, 16, false));
  EXPECT_DOUBLE_EQ(form("scatter", "chain", 7, 16, true), form("scatter", "chain", 7, 16, false));
}

TEST(SharedPort, TheTableSaysWhichPortAndTheModelTakesIt) {
  const auto shared = sim::PlogpTable::parse("L 5\n0 1 1 2\nport shared\n", "s.txt");
  EXPECT_TRUE(shared.shared_port());
  EXPECT_TRUE(plogp_model(shared).shared_port);
  const auto again = sim::PlogpTable::parse(shared.to_text(), "round trip");
  EXPECT_TRUE(again.shared_port());
  const auto serial = sim::PlogpTable::parse("L 5\n0 1 1 2\nport serial\n", "p.txt");
  EXPECT_FALSE(serial.shared_port());
  EXPECT_FALSE(plogp_model(serial).shared_port);
  EXPECT_FALSE(sim::PlogpTable::parse("L 5\n0 1 1 2\n", "d.txt").shared_port());
  try {
    sim::PlogpTable::parse("L 5\n0 1 1 2\nport wide\n", "b.txt");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "pLogP table b.txt:3: expected 'port serial' or 'port shared'");
  }
}

}  // namespace
}  // namespace grove::model
