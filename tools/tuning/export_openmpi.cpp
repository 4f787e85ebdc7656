// The Open MPI 4.x coll/tuned dynamic rules file (export.hpp).
//
// Format (read by coll/tuned's dynamic file reader; '#' starts a comment
// that runs to the end of the line):
//   <collectives>
//   per collective: <collective id> <communicator sizes>
//     per size: <communicator size> <message sizes>
//       per message size: <bytes> <algorithm> <fan-in/out> <segment size>
// A communicator uses the rules of the largest size not above its own, a
// message the last rule whose size is not above its own; the first message
// rule must be at 0. Message size per collective as coll/tuned computes it:
// bcast, reduce, allreduce the message; scatter, gather, allgather,
// alltoall, reduce_scatter_block every rank's block together; allgatherv
// the mean block. Algorithm 0 leaves the call to Open MPI's fixed rules.

#include <map>

#include <fmt/format.h>

#include "tuning/export.hpp"

namespace grove::tuning {
namespace {

struct OmpiCollective {
  const char* grove;
  int id;  // coll/base's COLLTYPE
  const char* name;
  bool total;  // message size is every rank's block together
};

constexpr OmpiCollective kCollectives[] = {
    {"allgather", 0, "ALLGATHER", true},
    {"allgatherv", 1, "ALLGATHERV", false},
    {"allreduce", 2, "ALLREDUCE", false},
    {"alltoall", 3, "ALLTOALL", true},
    {"barrier", 6, "BARRIER", false},
    {"bcast", 7, "BCAST", false},
    {"gather", 9, "GATHER", true},
    {"reduce", 11, "REDUCE", false},
    {"reduce_scatter", 13, "REDUCESCATTERBLOCK", true},
    {"scatter", 15, "SCATTER", true},
};

const OmpiCollective* ompi_collective(const std::string& name) {
  for (const OmpiCollective& c : kCollectives)
    if (name == c.grove) return &c;
  return nullptr;
}

// The bcast k-nomial radix the file is written for: coll/tuned reads it from
// one parameter, so rows of other radices are treated as having no
// equivalent. The model's most frequent choice.
int knomial_radix(const Tuning& tuning) {
  std::map<int, int> count;
  for (const Cell& c : tuning.cells)
    if (c.collective == "bcast" && c.chosen.name == "knomial") ++count[c.chosen.radix];
  int best = 4, most = 0;
  for (const auto& [radix, n] : count) {
    if (n > most) {
      best = radix;
      most = n;
    }
  }
  return best;
}

}  // namespace

ExportFiles export_openmpi(const Tuning& tuning, const coll::PortModel& model,
                           const std::string& path) {
  const int radix = knomial_radix(tuning);
  std::vector<std::string> notes;
  const std::vector<ExportCollective> plan = export_plan(
      tuning, model,
      [radix](const coll::AlgorithmSpec& spec, int ranks) {
        return openmpi_algorithm(spec, ranks, radix);
      },
      notes);
  std::vector<const ExportCollective*> written;
  for (const ExportCollective& ec : plan)
    if (ompi_collective(ec.collective)) written.push_back(&ec);

  std::string out;
  out += "# Open MPI coll/tuned dynamic rules (4.x format), written by grove tune\n";
  out += fmt::format("# model: {}\n", tuning.model);
  out += fmt::format(
      "# use: mpirun --mca coll_tuned_use_dynamic_rules 1 --mca "
      "coll_tuned_dynamic_rules_filename {} --mca coll_tuned_bcast_knomial_radix {}\n",
      path, radix);
  out += "# message size: bcast, reduce, allreduce the message; scatter, gather, allgather,\n";
  out += "# alltoall, reduce_scatter_block all blocks; allgatherv one block (docs/tuning.md)\n";
  for (const std::string& n : notes)
    out += fmt::format(
        "# no Open MPI equivalent for {}: those cells take the model's fastest that has one\n", n);
  out += fmt::format("{}  # collectives\n", written.size());
  for (const ExportCollective* ec : written) {
    const OmpiCollective& oc = *ompi_collective(ec->collective);
    out += fmt::format("{}  # {} ({})\n", oc.id, oc.name, ec->collective);
    out += fmt::format("{}  # communicator sizes\n", ec->comms.size() + 1);
    // Below the first size, Open MPI's own fixed rules.
    out += "1  # communicator size 1 and up: Open MPI's fixed rules\n";
    out += "1  # message sizes\n0 0 0 0\n";
    for (const ExportComm& comm : ec->comms) {
      out += fmt::format("{}  # communicator size\n", comm.ranks);
      out += fmt::format("{}  # message sizes\n", comm.rules.size());
      for (const ExportRule& r : comm.rules) {
        const uint64_t size =
            oc.total ? r.from_bytes * static_cast<uint64_t>(comm.ranks) : r.from_bytes;
        out +=
            fmt::format("{} {} {} {}  # {} (grove {}, predicted {:.3f} us{}{})\n", size,
                        r.algorithm.id, r.algorithm.faninout, r.algorithm.segsize, r.algorithm.name,
                        r.grove, r.predicted_us, r.why.empty() ? "" : "; " + r.why,
                        r.algorithm.approximate.empty() ? "" : "; " + r.algorithm.approximate);
      }
    }
  }
  ExportFiles files;
  files.files.push_back({path, out});
  files.usage = fmt::format(
      "mpirun --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename {} "
      "--mca coll_tuned_bcast_knomial_radix {} PROGRAM",
      path, radix);
  return files;
}

}  // namespace grove::tuning
