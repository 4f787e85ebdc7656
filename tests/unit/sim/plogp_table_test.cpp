#include "transport/sim/plogp_table.hpp"

#include <gtest/gtest.h>

#include <string>

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

// What parsing `text` (as file h.txt) throws, or "(no error)".
std::string parse_error(const char* text) {
  try {
    PlogpTable::parse(text, "h.txt");
  } catch (const Error& e) {
    return std::string(e.what());
  }
  return std::string("(no error)");
}

TEST(PlogpTable, BadHostTermsAreRefusedNamingTheLine) {
  EXPECT_EQ(
      parse_error("L 5\n0 1 1 2\ncopy 10\n"),
      "pLogP table h.txt:3: expected 'copy <bytes> <microseconds>' with non-negative numbers");
  EXPECT_EQ(parse_error("L 5\n0 1 1 2\ncopy 10 1\ncopy 10 2\n"),
            "pLogP table h.txt:4: copy sizes must increase from row to row (10 after 10)");
  EXPECT_EQ(parse_error("L 5\n0 1 1 2\ncall_us -1\n"),
            "pLogP table h.txt:3: expected 'call_us <microseconds>' with a non-negative number");
}

TEST(PlogpTable, CopyCurvesBetweenRanksParseInterpolateAndRoundTrip) {
  const auto t = PlogpTable::parse(
      "format grove-plogp/1\nL 5\n0 1 1 2\nshm_us 0.5\ncopy 1 0.01\ncopy 4096 0.21\n"
      "copy_in 1 0.02\ncopy_in 4096 0.42\ncopy_out 1 0.1\ncopy_out 4096 1.3\n"
      "copy_cma 1 2\ncopy_cma 4096 3\nend\n",
      "c.txt");
  ASSERT_TRUE(t.has_copy(CopyKind::in));
  EXPECT_DOUBLE_EQ(t.copy_us(2048.5, CopyKind::in), 0.22);
  EXPECT_DOUBLE_EQ(t.copy_us(2048.5, CopyKind::out), 0.7);
  EXPECT_DOUBLE_EQ(t.copy_us(8191, CopyKind::cma), 4);  // extrapolated
  EXPECT_DOUBLE_EQ(t.copy_us(2048.5), 0.11);            // the in-process curve is its own
  // Written and read back row for row, each curve under its keyword.
  const std::string text = t.to_text();
  EXPECT_NE(text.find("copy_out\t4096\t1.3\n"), std::string::npos) << text;
  const auto again = PlogpTable::parse(text, "round trip");
  for (CopyKind kind : kCopyKinds)
    EXPECT_EQ(again.copy_curve(kind), t.copy_curve(kind)) << copy_keyword(kind);
  // A table with the in-process curve only (older probes) has none of the others.
  const auto older = PlogpTable::parse("L 5\n0 1 1 2\ncopy 1 0.01\n", "o.txt");
  EXPECT_TRUE(older.has_copy());
  EXPECT_FALSE(older.has_copy(CopyKind::in));
  EXPECT_FALSE(older.has_copy(CopyKind::out));
  EXPECT_FALSE(older.has_copy(CopyKind::cma));
  EXPECT_DOUBLE_EQ(older.copy_us(64, CopyKind::cma), 0);
}

TEST(PlogpTable, BadCopyCurvesAreRefusedNamingTheLineAndTheCurve) {
  EXPECT_EQ(parse_error("L 5\n0 1 1 2\ncopy_in 10 -1\n"),
            "pLogP table h.txt:3: expected 'copy_in <bytes> <microseconds>' with non-negative "
            "numbers");
  EXPECT_EQ(parse_error("L 5\n0 1 1 2\ncopy_cma 10 1\ncopy_cma 4 2\n"),
            "pLogP table h.txt:4: copy_cma sizes must increase from row to row (4 after 10)");
  EXPECT_EQ(parse_error("L 5\n0 1 1 2\ncopy_out 10 1 2\n"),
            "pLogP table h.txt:3: expected 'copy_out <bytes> <microseconds>' with non-negative "
            "numbers");
  // Each curve's sizes increase on their own: another curve's rows do not count.
  EXPECT_EQ(parse_error("L 5\n0 1 1 2\ncopy 10 1\ncopy_in 1 1\ncopy_out 1 1\n"), "(no error)");
  // In code as in text.
  PlogpTable t = PlogpTable::parse("L 5\n0 1 1 2\n", "p.txt");
  EXPECT_THROW(t.set_copy_curve(CopyKind::out, {{4, 1}, {2, 1}}), Error);
  EXPECT_THROW(t.set_copy_curve(CopyKind::cma, {{4, -1}}), Error);
}

TEST(PlogpTable, PostedGapIsTheSendersGapAndTheRestOfGIsLatency) {
  const auto t = PlogpTable::parse(
      "format grove-plogp/1\nL 5\n0 1 1 2\n1000 3 2 12\n2000 4 3 22\n"
      "gap_posted 0 2\ngap_posted 1000 12\ngap_posted 2000 14\nend\n",
      "g.txt");
  ASSERT_TRUE(t.has_posted_gap());
  // Below 1000 B the two agree: no overlap.
  EXPECT_DOUBLE_EQ(t.send_gap_us(500), 7);
  EXPECT_DOUBLE_EQ(t.handshake_us(500), 0);
  // At 1500 B: g 17, gp 13; one message still takes g + L.
  EXPECT_DOUBLE_EQ(t.send_gap_us(1500), 13);
  EXPECT_DOUBLE_EQ(t.handshake_us(1500), 4);
  EXPECT_DOUBLE_EQ(t.send_gap_us(1500) + t.handshake_us(1500), t.g_us(1500));
  const auto again = PlogpTable::parse(t.to_text(), "round trip");
  EXPECT_EQ(again.posted_gap(), t.posted_gap());
  // A gp above g (sends posted together slower than one alone) is not
  // taken: the sender's gap is never above g.
  const auto slower =
      PlogpTable::parse("L 5\n0 1 1 2\n1000 3 2 12\ngap_posted 0 3\ngap_posted 1000 20\n", "s");
  EXPECT_DOUBLE_EQ(slower.send_gap_us(1000), 12);
  EXPECT_DOUBLE_EQ(slower.handshake_us(1000), 0);
  // Without the rows, the gap is g.
  const auto plain = PlogpTable::parse("L 5\n0 1 1 2\n1000 3 2 12\n", "p");
  EXPECT_FALSE(plain.has_posted_gap());
  EXPECT_DOUBLE_EQ(plain.send_gap_us(700), plain.g_us(700));
  EXPECT_DOUBLE_EQ(plain.handshake_us(700), 0);
  // Bad rows are refused by line.
  try {
    PlogpTable::parse("L 5\n0 1 1 2\ngap_posted 8 1\ngap_posted 8 2\n", "b.txt");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "pLogP table b.txt:4: gap_posted sizes must increase from row to row (8 after 8)");
  }
}

}  // namespace
}  // namespace grove::sim
