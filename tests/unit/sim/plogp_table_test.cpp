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

TEST(PlogpTable, HostTermsParseInterpolateAndRoundTrip) {
  const auto t = PlogpTable::parse(
      "L 5\n0 1 1 2\ncall_us 1.5\nshm_us 0.5\ncopy 1 0.01\ncopy 4096 0.21\n", "h.txt");
  EXPECT_DOUBLE_EQ(t.call_us(), 1.5);
  EXPECT_DOUBLE_EQ(t.shm_us(), 0.5);
  ASSERT_TRUE(t.has_copy());
  EXPECT_DOUBLE_EQ(t.copy_us(1), 0.01);
  EXPECT_DOUBLE_EQ(t.copy_us(2048.5), 0.11);
  EXPECT_DOUBLE_EQ(t.copy_us(8191), 0.41);  // extrapolated
  const auto again = PlogpTable::parse(t.to_text(), "round trip");
  EXPECT_DOUBLE_EQ(again.call_us(), 1.5);
  EXPECT_DOUBLE_EQ(again.shm_us(), 0.5);
  EXPECT_DOUBLE_EQ(again.copy_us(4096), 0.21);
  // Without the lines, a table has no host terms.
  const auto plain = PlogpTable::parse("L 5\n0 1 1 2\n", "p.txt");
  EXPECT_FALSE(plain.has_copy());
  EXPECT_DOUBLE_EQ(plain.call_us(), 0);
}

TEST(PlogpTable, BadHostTermsAreRefusedNamingTheLine) {
  auto message = [](const char* text) {
    try {
      PlogpTable::parse(text, "h.txt");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(
      message("L 5\n0 1 1 2\ncopy 10\n"),
      "pLogP table h.txt:3: expected 'copy <bytes> <microseconds>' with non-negative numbers");
  EXPECT_EQ(message("L 5\n0 1 1 2\ncopy 10 1\ncopy 10 2\n"),
            "pLogP table h.txt:4: copy sizes must increase from row to row (10 after 10)");
  EXPECT_EQ(message("L 5\n0 1 1 2\ncall_us -1\n"),
            "pLogP table h.txt:3: expected 'call_us <microseconds>' with a non-negative number");
}

}  // namespace
}  // namespace grove::sim
