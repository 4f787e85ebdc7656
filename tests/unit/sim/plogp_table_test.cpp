#include "transport/sim/plogp_table.hpp"

#include <gtest/gtest.h>

#include "grove/error.hpp"

namespace grove::sim {
namespace {

TEST(PlogpTable, ParsesAndInterpolates) {
  const auto t = PlogpTable::parse(
      "# measured\nL 5\nbytes os_us or_us g_us\n0 1 1 2\n1000 3 2 12\n2000 4 3 22\n", "text");
  EXPECT_DOUBLE_EQ(t.latency_us(), 5);
  EXPECT_DOUBLE_EQ(t.g_us(0), 2);
  EXPECT_DOUBLE_EQ(t.g_us(500), 7);
  EXPECT_DOUBLE_EQ(t.os_us(1500), 3.5);
  EXPECT_DOUBLE_EQ(t.g_us(4000), 42);  // extrapolated from the last two rows
  EXPECT_DOUBLE_EQ(t.or_us(1000), 2);
  const auto again = PlogpTable::parse(t.to_text(), "round trip");
  EXPECT_DOUBLE_EQ(again.g_us(1500), 17);
}

TEST(PlogpTable, RejectsMalformedTablesNamingTheLine) {
  try {
    PlogpTable::parse("L 5\n0 1 1 2\n0 1 1 2\n", "t.tsv");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("t.tsv:3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(PlogpTable::parse("0 1 1 2\n", "x"), Error);        // no L
  EXPECT_THROW(PlogpTable::parse("L 5\n", "x"), Error);            // no rows
  EXPECT_THROW(PlogpTable::parse("L 5\n0 1 1\n", "x"), Error);     // 3 fields
  EXPECT_THROW(PlogpTable::parse("L 5\n0 1 x 2\n", "x"), Error);   // not a number
  EXPECT_THROW(PlogpTable::parse("L -1\n0 1 1 2\n", "x"), Error);  // negative
  EXPECT_THROW(PlogpTable::load("/nonexistent/table.tsv"), Error);
}

}  // namespace
}  // namespace grove::sim
