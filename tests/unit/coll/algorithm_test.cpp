#include "coll/algorithm.hpp"

#include <gtest/gtest.h>

#include <set>

#include "coll/barrier.hpp"
#include "coll/bcast.hpp"
#include "coll/scatter.hpp"
#include "grove/error.hpp"
#include "support/auto_choice.hpp"

namespace grove::coll {
namespace {

TEST(Algorithm, ParsesNamesAndArguments) {
  EXPECT_EQ(parse_algorithm("bcast", "binomial").to_string(), "binomial");
  EXPECT_EQ(parse_algorithm("bcast", " knomial:4 ").to_string(), "knomial:4");
  EXPECT_EQ(parse_algorithm("bcast", "knomial:k=8").radix, 8);
  EXPECT_EQ(parse_algorithm("bcast", "knomial").to_string(), "knomial:4");  // default radix
  EXPECT_EQ(parse_algorithm("bcast", "kary:3").radix, 3);
  const AlgorithmSpec p = parse_algorithm("bcast", "pipeline:seg=64KiB");
  EXPECT_EQ(p.segment, 65536u);
  EXPECT_EQ(p.to_string(), "pipeline:seg=64KiB");
  EXPECT_EQ(parse_algorithm("bcast", "pipeline:seg=1000").to_string(), "pipeline:seg=1000");
  EXPECT_EQ(parse_algorithm("bcast", "pipeline").segment, 0u);
  EXPECT_TRUE(parse_algorithm("bcast", "auto").is_auto());
  EXPECT_EQ(parse_algorithm("barrier", "dissemination").collective, "barrier");
  // The canonical form parses back to the same spec.
  for (const std::string& text : algorithm_examples("bcast"))
    EXPECT_EQ(parse_algorithm("bcast", parse_algorithm("bcast", text).to_string()),
              parse_algorithm("bcast", text));
}

void expect_rejected(std::string_view collective, std::string_view text, std::string_view needle) {
  try {
    parse_algorithm(collective, text);
    ADD_FAILURE() << "accepted " << text;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument);
    const std::string what = e.what();
    EXPECT_NE(what.find(text), std::string::npos) << what;
    EXPECT_NE(what.find(needle), std::string::npos) << what;
  }
}

TEST(Algorithm, RejectsBadNamesAndArguments) {
  expect_rejected("bcast", "fastest", "unknown algorithm 'fastest'");
  expect_rejected("bcast", "fastest", "binomial");  // lists the known ones
  expect_rejected("bcast", "knomial:1", "radix 1 is outside");
  expect_rejected("bcast", "knomial:x", "not an integer");
  expect_rejected("bcast", "knomial:4,4", "radix given twice");
  expect_rejected("bcast", "binomial:4", "takes no radix");
  expect_rejected("bcast", "binomial:seg=4KiB", "takes no segment");
  expect_rejected("bcast", "pipeline:seg=0", "outside");
  expect_rejected("bcast", "pipeline:seg=lots", "seg");
  expect_rejected("bcast", "pipeline:color=red", "unknown argument 'color=red'");
  expect_rejected("bcast", "pipeline:", "empty argument list");
  expect_rejected("bcast", "auto:2", "auto takes no arguments");
  expect_rejected("barrier", "scatter_allgather", "unknown algorithm");
  EXPECT_THROW(parse_algorithm("nosuchcollective", "flat"), Error);
}

TEST(Algorithm, StampsAreStableAndDistinct) {
  // Part of the wire format: these values must not change between builds.
  const AlgorithmSpec binomial = parse_algorithm("bcast", "binomial");
  EXPECT_EQ(binomial.stamp(), parse_algorithm("bcast", "binomial").stamp());
  EXPECT_NE(parse_algorithm("bcast", "knomial:4").stamp(),
            parse_algorithm("bcast", "knomial:8").stamp());
  for (const char* collective : {"bcast", "barrier"}) {
    std::set<int> stamps;
    const auto examples = algorithm_examples(collective);
    for (const std::string& text : examples)
      stamps.insert(parse_algorithm(collective, text).stamp());
    EXPECT_EQ(stamps.size(), examples.size()) << collective;
  }
}

TEST(Algorithm, ValidatorForParameters) {
  const auto validate = algorithm_validator("bcast");
  EXPECT_EQ(validate("knomial:4"), "");
  EXPECT_EQ(validate("auto"), "");
  EXPECT_NE(validate("knomial:0").find("radix 0"), std::string::npos);
}

TEST(Algorithm, ExamplesListEveryAlgorithm) {
  EXPECT_EQ(algorithm_examples("bcast"),
            (std::vector<std::string>{"flat", "chain", "pipeline", "binary", "kary:4", "binomial",
                                      "knomial:4", "scatter_allgather"}));
  EXPECT_EQ(algorithm_examples("barrier"),
            (std::vector<std::string>{"dissemination", "knomial:4", "flat"}));
}

TEST(Algorithm, ScatterAutoIsBinomialOnlyForManyRanksAndSmallBlocks) {
  EXPECT_EQ(resolved(ScatterArgs{0, 11, 0, 299, {}}).name, "binomial");
  EXPECT_EQ(resolved(ScatterArgs{0, 11, 0, 300, {}}).name, "flat");
  EXPECT_EQ(resolved(ScatterArgs{0, 10, 0, 1, {}}).name, "flat");
  EXPECT_EQ(resolved(ScatterArgs{0, 2, 0, 1 << 20, {}}).name, "flat");
}

TEST(Algorithm, BcastAutoFollowsMpichThresholds) {
  EXPECT_EQ(resolved(BcastArgs{0, 16, 0, 12287, {}}).name, "binomial");
  EXPECT_EQ(resolved(BcastArgs{0, 16, 0, 12288, {}}).name, "scatter_allgather");
  EXPECT_EQ(resolved(BcastArgs{0, 7, 0, 1 << 20, {}}).name, "binomial");
  EXPECT_EQ(resolved(BcastArgs{0, 8, 0, 1 << 20, {}}).name, "scatter_allgather");
  const AlgorithmSpec pipeline = resolved(BcastArgs{0, 4, 0, 1 << 20, {}}, "pipeline");
  EXPECT_EQ(pipeline.segment,
            static_cast<uint64_t>(params::Registry::global().get("bcast_segment_size").as_int));
  EXPECT_EQ(pipeline.to_string(), "pipeline:seg=64KiB");
  EXPECT_EQ(resolved(BarrierArgs{0, 5, {}}).name, "dissemination");
}

}  // namespace
}  // namespace grove::coll
