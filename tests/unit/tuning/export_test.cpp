// Exports of grove tune (tools/tuning/export.hpp): the Open MPI rules file
// read back by the grammar of coll/tuned's dynamic file reader, the MPICH
// selection file as JSON, and the algorithm maps. (tests/mp/tune_cli_test.sh
// runs the peers' jobs with the files.)

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "grove/error.hpp"
#include "tuning/export.hpp"
#include "tuning/tune.hpp"

namespace grove::tuning {
namespace {

coll::PortModel linear_export_model() {
  coll::PortModel m;
  m.u = [](double bytes) { return 2.0 + bytes / 1024; };
  m.w = m.u;
  m.lambda = 10.0;
  return m;
}

Tuning small_tuning() {
  Tuning t = tune(make_grid("2-4", "1,4KiB,1MiB", {"bcast", "scatter", "allreduce"}),
                  linear_export_model());
  t.model = "synthetic";
  return t;
}

// coll/tuned's rules file: integers, '#' comments to the end of the line.
struct OmpiRule {
  uint64_t bytes;
  int algorithm, faninout;
  uint64_t segsize;
};
struct OmpiComm {
  int size;
  std::vector<OmpiRule> rules;
};
struct OmpiCollective {
  int id;
  std::vector<OmpiComm> comms;
};

std::vector<OmpiCollective> read_ompi_rules(const std::string& text) {
  std::istringstream lines(text);
  std::string line, tokens;
  while (std::getline(lines, line))
    tokens += line.substr(0, line.find('#')) + " ";
  std::istringstream in(tokens);
  auto next = [&]() -> int64_t {
    int64_t v = -1;
    if (!(in >> v)) throw std::runtime_error("rules file ends early");
    return v;
  };
  std::vector<OmpiCollective> out(static_cast<size_t>(next()));
  for (OmpiCollective& c : out) {
    c.id = static_cast<int>(next());
    c.comms.resize(static_cast<size_t>(next()));
    for (OmpiComm& comm : c.comms) {
      comm.size = static_cast<int>(next());
      comm.rules.resize(static_cast<size_t>(next()));
      for (OmpiRule& r : comm.rules) {
        r.bytes = static_cast<uint64_t>(next());
        r.algorithm = static_cast<int>(next());
        r.faninout = static_cast<int>(next());
        r.segsize = static_cast<uint64_t>(next());
      }
    }
  }
  std::string rest;
  if (in >> rest) throw std::runtime_error("rules file has more after its last rule: " + rest);
  return out;
}

TEST(Export, OpenMpiRulesFollowCollTunedsGrammar) {
  const ExportFiles files = export_openmpi(small_tuning(), linear_export_model(), "rules.txt");
  ASSERT_EQ(files.files.size(), 1u);
  EXPECT_EQ(files.files[0].first, "rules.txt");
  const std::vector<OmpiCollective> rules = read_ompi_rules(files.files[0].second);
  // allreduce 2, bcast 7, scatter 15 (coll/base's collective numbers).
  ASSERT_EQ(rules.size(), 3u);
  EXPECT_EQ(rules[0].id, 2);
  EXPECT_EQ(rules[1].id, 7);
  EXPECT_EQ(rules[2].id, 15);
  for (const OmpiCollective& c : rules) {
    // Open MPI's fixed rules below the grid, then one entry per rank count.
    ASSERT_EQ(c.comms.size(), 4u);
    for (size_t i = 0; i < c.comms.size(); ++i) {
      EXPECT_EQ(c.comms[i].size, i == 0 ? 1 : static_cast<int>(i) + 1);
      ASSERT_FALSE(c.comms[i].rules.empty());
      EXPECT_EQ(c.comms[i].rules[0].bytes, 0u);
      for (size_t j = 1; j < c.comms[i].rules.size(); ++j)
        EXPECT_LT(c.comms[i].rules[j - 1].bytes, c.comms[i].rules[j].bytes);
    }
  }
  // bcast at 3 ranks: flat (basic_linear, 1) below 1 MiB, then the chain in
  // 45591 B segments (pipeline, 3), as grove tune chose.
  const OmpiComm& bcast3 = rules[1].comms[2];
  ASSERT_EQ(bcast3.rules.size(), 2u);
  EXPECT_EQ(bcast3.rules[0].algorithm, 1);
  EXPECT_EQ(bcast3.rules[1].bytes, 1048576u);
  EXPECT_EQ(bcast3.rules[1].algorithm, 3);
  EXPECT_EQ(bcast3.rules[1].segsize, 45591u);
}

TEST(Export, MpichSelectionIsJsonWithItsCompanion) {
  const ExportFiles files = export_mpich(small_tuning(), linear_export_model(), "sel.json");
  ASSERT_EQ(files.files.size(), 2u);
  EXPECT_EQ(files.files[0].first, "sel.json");
  EXPECT_EQ(files.files[1].first, "sel.ch4.json");
  for (const auto& [path, text] : files.files) {
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, true, /*ignore_comments=*/true);
    EXPECT_TRUE(j.is_object()) << path;
  }
  const nlohmann::json j = nlohmann::json::parse(files.files[0].second, nullptr, true, true);
  // At 3 ranks and 1 MiB grove's pipeline has no MPICH equivalent: the
  // model's fastest that has one is MPICH's scatter + ring allgather.
  const nlohmann::json& bcast3 = j.at("collective=bcast").at("comm_type=intra").at("comm_size<=3");
  EXPECT_TRUE(
      bcast3.at("avg_msg_size=any").contains("algorithm=MPIR_Bcast_intra_scatter_ring_allgather"));
  EXPECT_TRUE(bcast3.at("avg_msg_size<=1048575").contains("algorithm=MPIR_Bcast_intra_binomial"));
  EXPECT_NE(files.files[0].second.find("no MPICH equivalent for bcast flat"), std::string::npos);
}

TEST(Export, AlgorithmMapsNameThePeersNumbersAndWhatHasNone) {
  coll::AlgorithmSpec s;
  s.collective = "bcast";
  s.name = "pipeline";
  s.segment = 8192;
  const PeerAlgorithm p = openmpi_algorithm(s, 8, 4);
  EXPECT_TRUE(p.exists);
  EXPECT_EQ(p.id, 3);
  EXPECT_EQ(p.segsize, 8192u);
  s.name = "knomial";
  s.radix = 3;
  EXPECT_FALSE(openmpi_algorithm(s, 8, 4).exists);  // coll/tuned takes one radix per job
  s.radix = 4;
  EXPECT_EQ(openmpi_algorithm(s, 8, 4).id, 7);
  s.name = "binomial";
  EXPECT_EQ(mpich_algorithm(s, 8).name, "MPIR_Bcast_intra_binomial");
  s.name = "flat";
  EXPECT_FALSE(mpich_algorithm(s, 8).exists);
  EXPECT_NE(mapping_table_markdown().find("| bcast |"), std::string::npos);
}

}  // namespace
}  // namespace grove::tuning
