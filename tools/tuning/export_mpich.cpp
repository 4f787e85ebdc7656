// MPICH 4.x collective selection (CSEL) JSON (export.hpp).
//
// A CSEL file is a tree of "key=value" objects tried in order, each level
// falling through to its next sibling when its condition fails, down to an
// "algorithm=NAME" container. MPICH asserts when a search finds nothing, and
// calls collectives internally (communicator creation), so the file covers
// every collective MPICH selects for, intra and inter, each level ending in
// an "=any" branch. Conditions used: comm_size<=N (MPICH compares "<" as
// "<=" in 4.0's search, so only "<=" is written), avg_msg_size<=B (bcast,
// reduce, allreduce: the message; alltoall: one block), total_msg_size<=B
// (scatter, gather, allgather, allgatherv, reduce_scatter_block: all
// blocks), and the guards MPICH's algorithms need (a power-of-two size, a
// built-in commutative operation, not in place). MPICH's JSON reader (json-c)
// takes // comments.

#include <climits>
#include <map>

#include <fmt/format.h>

#include "tuning/export.hpp"

namespace grove::tuning {
namespace {

enum class Measure { none, avg, total };

struct MpichCollective {
  const char* grove;
  const char* key;  // "bcast", "reduce_scatter_block"
  Measure measure;
};

constexpr MpichCollective kTuned[] = {
    {"bcast", "bcast", Measure::avg},
    {"scatter", "scatter", Measure::total},
    {"gather", "gather", Measure::total},
    {"allgather", "allgather", Measure::total},
    {"allgatherv", "allgatherv", Measure::total},
    {"alltoall", "alltoall", Measure::avg},
    {"reduce", "reduce", Measure::avg},
    {"allreduce", "allreduce", Measure::avg},
    {"reduce_scatter", "reduce_scatter_block", Measure::total},
    {"barrier", "barrier", Measure::none},
};

// Every collective MPICH 4.0 selects for, with an algorithm that runs any
// call of it (intra, and inter where MPICH has intercommunicator forms);
// "allcomm" algorithms serve both. Tuned collectives replace the intra one.
struct Default {
  const char* key;
  const char* intra;
  const char* inter;                // "" : no intercommunicator form
  const char* intra_in_place = "";  // the algorithm for in-place calls, when it must differ
};
constexpr Default kDefaults[] = {
    {"barrier", "MPIR_Barrier_intra_dissemination", "MPIR_Barrier_inter_bcast"},
    {"bcast", "MPIR_Bcast_intra_binomial", "MPIR_Bcast_inter_remote_send_local_bcast"},
    {"allreduce", "MPIR_Allreduce_intra_recursive_doubling",
     "MPIR_Allreduce_inter_reduce_exchange_bcast"},
    {"allgather", "MPIR_Allgather_intra_brucks", "MPIR_Allgather_inter_local_gather_remote_bcast"},
    {"allgatherv", "MPIR_Allgatherv_intra_brucks",
     "MPIR_Allgatherv_inter_remote_gather_local_bcast"},
    {"reduce", "MPIR_Reduce_intra_binomial", "MPIR_Reduce_inter_local_reduce_remote_send"},
    {"reduce_scatter", "MPIR_Reduce_scatter_intra_recursive_doubling",
     "MPIR_Reduce_scatter_inter_remote_reduce_local_scatter"},
    {"reduce_scatter_block", "MPIR_Reduce_scatter_block_intra_recursive_doubling",
     "MPIR_Reduce_scatter_block_inter_remote_reduce_local_scatter"},
    {"gather", "MPIR_Gather_intra_binomial", "MPIR_Gather_inter_linear"},
    {"scatter", "MPIR_Scatter_intra_binomial", "MPIR_Scatter_inter_linear"},
    {"gatherv", "MPIR_Gatherv_allcomm_linear", ""},
    {"scatterv", "MPIR_Scatterv_allcomm_linear", ""},
    {"scan", "MPIR_Scan_intra_recursive_doubling", ""},
    {"exscan", "MPIR_Exscan_intra_recursive_doubling", ""},
    {"alltoall", "MPIR_Alltoall_intra_pairwise", "MPIR_Alltoall_inter_pairwise_exchange",
     "MPIR_Alltoall_intra_pairwise_sendrecv_replace"},
    {"alltoallv", "MPIR_Alltoallv_intra_scattered", "MPIR_Alltoallv_inter_pairwise_exchange",
     "MPIR_Alltoallv_intra_pairwise_sendrecv_replace"},
    {"alltoallw", "MPIR_Alltoallw_intra_scattered", "MPIR_Alltoallw_inter_pairwise_exchange",
     "MPIR_Alltoallw_intra_pairwise_sendrecv_replace"},
    {"neighbor_allgather", "MPIR_Neighbor_allgather_allcomm_nb", ""},
    {"neighbor_allgatherv", "MPIR_Neighbor_allgatherv_allcomm_nb", ""},
    {"neighbor_alltoall", "MPIR_Neighbor_alltoall_allcomm_nb", ""},
    {"neighbor_alltoallv", "MPIR_Neighbor_alltoallv_allcomm_nb", ""},
    {"neighbor_alltoallw", "MPIR_Neighbor_alltoallw_allcomm_nb", ""},
    {"ibarrier", "MPIR_Ibarrier_intra_sched_recursive_doubling", "MPIR_Ibarrier_inter_sched_bcast"},
    {"ibcast", "MPIR_Ibcast_intra_sched_binomial", "MPIR_Ibcast_inter_sched_flat"},
    {"iallreduce", "MPIR_Iallreduce_intra_sched_recursive_doubling",
     "MPIR_Iallreduce_inter_sched_remote_reduce_local_bcast"},
    {"iallgather", "MPIR_Iallgather_intra_sched_brucks",
     "MPIR_Iallgather_inter_sched_local_gather_remote_bcast"},
    {"iallgatherv", "MPIR_Iallgatherv_intra_sched_brucks",
     "MPIR_Iallgatherv_inter_sched_remote_gather_local_bcast"},
    {"ireduce", "MPIR_Ireduce_intra_sched_binomial",
     "MPIR_Ireduce_inter_sched_local_reduce_remote_send"},
    {"ireduce_scatter", "MPIR_Ireduce_scatter_intra_sched_recursive_doubling",
     "MPIR_Ireduce_scatter_inter_sched_remote_reduce_local_scatterv"},
    {"ireduce_scatter_block", "MPIR_Ireduce_scatter_block_intra_sched_recursive_doubling",
     "MPIR_Ireduce_scatter_block_inter_sched_remote_reduce_local_scatterv"},
    {"igather", "MPIR_Igather_intra_sched_binomial", "MPIR_Igather_inter_sched_long"},
    {"iscatter", "MPIR_Iscatter_intra_sched_binomial", "MPIR_Iscatter_inter_sched_linear"},
    {"igatherv", "MPIR_Igatherv_allcomm_sched_linear", ""},
    {"iscatterv", "MPIR_Iscatterv_allcomm_sched_linear", ""},
    {"iscan", "MPIR_Iscan_intra_sched_recursive_doubling", ""},
    {"iexscan", "MPIR_Iexscan_intra_sched_recursive_doubling", ""},
    {"ialltoall", "MPIR_Ialltoall_intra_sched_pairwise",
     "MPIR_Ialltoall_inter_sched_pairwise_exchange", "MPIR_Ialltoall_intra_sched_inplace"},
    {"ialltoallv", "MPIR_Ialltoallv_intra_sched_blocked",
     "MPIR_Ialltoallv_inter_sched_pairwise_exchange", "MPIR_Ialltoallv_intra_sched_inplace"},
    {"ialltoallw", "MPIR_Ialltoallw_intra_sched_blocked",
     "MPIR_Ialltoallw_inter_sched_pairwise_exchange", "MPIR_Ialltoallw_intra_sched_inplace"},
    {"ineighbor_allgather", "MPIR_Ineighbor_allgather_allcomm_sched_linear", ""},
    {"ineighbor_allgatherv", "MPIR_Ineighbor_allgatherv_allcomm_sched_linear", ""},
    {"ineighbor_alltoall", "MPIR_Ineighbor_alltoall_allcomm_sched_linear", ""},
    {"ineighbor_alltoallv", "MPIR_Ineighbor_alltoallv_allcomm_sched_linear", ""},
    {"ineighbor_alltoallw", "MPIR_Ineighbor_alltoallw_allcomm_sched_linear", ""},
};

std::string indent(int depth) {
  return std::string(static_cast<size_t>(2 * depth), ' ');
}

std::string container(const std::string& name) {
  return fmt::format("\"algorithm={}\": {{}}", name);
}

// The algorithm wrapped in the guards MPICH needs for it (coll_algorithms.txt
// restrictions), each guard's failure taking an algorithm without them.
std::string guarded(const std::string& name, int depth) {
  auto pair = [&](const std::string& key_a, const std::string& a, const std::string& key_b,
                  const std::string& b) {
    return fmt::format("{{\n{0}\"{1}\": {{ {2} }},\n{0}\"{3}\": {{ {4} }}\n{5}}}",
                       indent(depth + 1), key_a, container(a), key_b, container(b), indent(depth));
  };
  if (name == "MPIR_Reduce_intra_reduce_scatter_gather" ||
      name == "MPIR_Allreduce_intra_reduce_scatter_allgather") {
    const std::string safe = name.starts_with("MPIR_Reduce")
                                 ? "MPIR_Reduce_intra_binomial"
                                 : "MPIR_Allreduce_intra_recursive_doubling";
    return fmt::format(
        "{{\n{0}\"is_op_built_in=no\": {{ {1} }},\n{0}\"count<pow2\": {{ {1} "
        "}},\n{0}\"count=any\": "
        "{{ {2} }}\n{3}}}",
        indent(depth + 1), container(safe), container(name), indent(depth));
  }
  if (name == "MPIR_Reduce_scatter_block_intra_recursive_halving" ||
      name == "MPIR_Reduce_scatter_block_intra_pairwise") {
    return pair("is_commutative=no", "MPIR_Reduce_scatter_block_intra_recursive_doubling",
                "is_commutative=yes", name);
  }
  if (name == "MPIR_Alltoall_intra_scattered" || name == "MPIR_Alltoall_intra_pairwise" ||
      name == "MPIR_Alltoall_intra_brucks") {
    return pair("is_sendbuf_inplace=yes", "MPIR_Alltoall_intra_pairwise_sendrecv_replace",
                "is_sendbuf_inplace=no", name);
  }
  if (name == "MPIR_Allgather_intra_recursive_doubling") {
    return pair("comm_size=pow2", name, "comm_size=any", "MPIR_Allgather_intra_brucks");
  }
  return "{ " + container(name) + " }";
}

const MpichCollective* tuned(const std::string& grove) {
  for (const MpichCollective& c : kTuned)
    if (grove == c.grove) return &c;
  return nullptr;
}

std::string comment(const ExportRule& r) {
  return fmt::format("// grove {}, predicted {:.3f} us{}{}", r.grove, r.predicted_us,
                     r.why.empty() ? "" : "; " + r.why,
                     r.algorithm.approximate.empty() ? "" : "; " + r.algorithm.approximate);
}

// One communicator size's rules, as nested size conditions (a comment line
// before each: a comment after a value would swallow the comma).
std::string size_rules(const ExportComm& comm, Measure measure, int depth) {
  if (measure == Measure::none || comm.rules.size() == 1) {
    return guarded(comm.rules.front().algorithm.name, depth);
  }
  const char* key = measure == Measure::avg ? "avg_msg_size" : "total_msg_size";
  const uint64_t scale = measure == Measure::total ? static_cast<uint64_t>(comm.ranks) : 1;
  std::string out = "{\n";
  for (size_t i = 0; i < comm.rules.size(); ++i) {
    const ExportRule& r = comm.rules[i];
    const uint64_t next =
        i + 1 < comm.rules.size() ? comm.rules[i + 1].from_bytes * scale : UINT64_MAX;
    // MPICH reads the bound as an int: a larger one is no bound at all.
    const bool last = next == UINT64_MAX || next - 1 > static_cast<uint64_t>(INT_MAX);
    const std::string condition =
        last ? fmt::format("{}=any", key) : fmt::format("{}<={}", key, next - 1);
    out += fmt::format("{0}{1}\n{0}\"{2}\": {3}{4}\n", indent(depth + 1), comment(r), condition,
                       guarded(r.algorithm.name, depth + 1), last ? "" : ",");
    if (last) break;
  }
  return out + indent(depth) + "}";
}

std::string tuned_intra(const ExportCollective& ec, Measure measure, int depth) {
  std::string out = "{\n";
  for (size_t i = 0; i < ec.comms.size(); ++i) {
    const bool last = i + 1 == ec.comms.size();
    const std::string condition =
        last ? "comm_size=any" : fmt::format("comm_size<={}", ec.comms[i + 1].ranks - 1);
    const ExportComm& comm = ec.comms[i];
    if (measure == Measure::none || comm.rules.size() == 1)
      out += indent(depth + 1) + comment(comm.rules.front()) + "\n";
    out += fmt::format("{}\"{}\": {}{}\n", indent(depth + 1), condition,
                       size_rules(comm, measure, depth + 1), last ? "" : ",");
  }
  return out + indent(depth) + "}";
}

}  // namespace

ExportFiles export_mpich(const Tuning& tuning, const coll::PortModel& model,
                         const std::string& path) {
  std::vector<std::string> notes;
  const std::vector<ExportCollective> plan = export_plan(tuning, model, &mpich_algorithm, notes);
  std::map<std::string, const ExportCollective*> by_key;
  for (const ExportCollective& ec : plan)
    if (const MpichCollective* mc = tuned(ec.collective)) by_key[mc->key] = &ec;

  std::string out = "{\n";
  out += "  // MPICH collective selection (MPIR level), written by grove tune\n";
  out += fmt::format("  // model: {}\n", tuning.model);
  for (const std::string& n : notes)
    out += fmt::format(
        "  // no MPICH equivalent for {}: those cells take the model's fastest that has one\n", n);
  const char* separator = "";
  for (const Default& d : kDefaults) {
    out += fmt::format("{}  \"collective={}\": {{\n", separator, d.key);
    separator = ",\n";
    const auto it = by_key.find(d.key);
    std::string intra;
    if (it != by_key.end()) {
      intra = tuned_intra(*it->second, tuned(it->second->collective)->measure, 2);
    } else if (*d.intra_in_place != '\0') {
      intra = fmt::format(
          "{{\n      \"is_sendbuf_inplace=yes\": {{ {} }},\n      "
          "\"is_sendbuf_inplace=no\": {{ {} }}\n    }}",
          container(d.intra_in_place), container(d.intra));
    } else {
      intra = "{ " + container(d.intra) + " }";
    }
    if (std::string(d.intra).find("_allcomm_") != std::string::npos) {
      out += fmt::format("    {}\n  }}", container(d.intra));
      continue;
    }
    out += fmt::format("    \"comm_type=intra\": {}", intra);
    if (*d.inter != '\0')
      out += fmt::format(",\n    \"comm_type=inter\": {{ {} }}", container(d.inter));
    out += "\n  }";
  }
  out += "\n}\n";

  const std::string ch4 =
      path.ends_with(".json") ? path.substr(0, path.size() - 5) + ".ch4.json" : path + ".ch4.json";
  const std::string ch4_text =
      "{\n  // MPICH CH4 selection, written by grove tune: no composition is selected, so every\n"
      "  // collective goes to the MPIR level and its table (MPIR_CVAR_COLL_SELECTION_TUNING_"
      "JSON_FILE)\n}\n";
  ExportFiles files;
  files.files.push_back({path, out});
  files.files.push_back({ch4, ch4_text});
  files.usage = fmt::format(
      "MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE={} "
      "MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE={} "
      "mpirun.mpich ... PROGRAM",
      path, ch4);
  return files;
}

}  // namespace grove::tuning
