// grove's algorithms against Open MPI 4.1's coll/tuned and MPICH 4.0's
// collective selection. Algorithm numbers, names and restrictions are the
// peers' (Open MPI: the coll_tuned_<collective>_algorithm enumerations and
// its base algorithms; MPICH: src/mpi/coll/coll_algorithms.txt).

#include <fmt/format.h>

#include "tuning/export.hpp"

namespace grove::tuning {
namespace {

bool pow2(int n) {
  return n > 0 && (n & (n - 1)) == 0;
}

PeerAlgorithm none() {
  return {};
}

PeerAlgorithm ompi(int id, std::string name, std::string approximate = "", uint64_t segsize = 0,
                   int faninout = 0) {
  return {true, id, std::move(name), faninout, segsize, std::move(approximate)};
}

PeerAlgorithm mpich(std::string name, std::string approximate = "") {
  return {true, 0, std::move(name), 0, 0, std::move(approximate)};
}

}  // namespace

PeerAlgorithm openmpi_algorithm(const coll::AlgorithmSpec& s, int ranks, int knomial_radix) {
  const std::string& c = s.collective;
  const std::string& a = s.name;
  if (c == "bcast") {
    if (a == "flat") return ompi(1, "basic_linear");
    if (a == "chain") return ompi(2, "chain", "", 0, 1);
    if (a == "pipeline") return ompi(3, "pipeline", "", s.segment);
    if (a == "binary" || (a == "kary" && s.radix == 2))
      return ompi(5, "binary_tree", "Open MPI's in-order binary tree, grove's heap");
    if (a == "binomial") return ompi(6, "binomial");
    if (a == "knomial" && s.radix == knomial_radix) return ompi(7, "knomial");
    if (a == "scatter_allgather") return ompi(9, "scatter_allgather_ring");
    return none();
  }
  if (c == "scatter") {
    if (a == "flat") return ompi(1, "basic_linear");
    if (a == "binomial") return ompi(2, "binomial");
    return none();
  }
  if (c == "gather") {
    if (a == "flat") return ompi(1, "basic_linear");
    if (a == "binomial") return ompi(2, "binomial");
    return none();
  }
  if (c == "allgather") {
    if (a == "ring") return ompi(4, "ring");
    if (a == "recursive_doubling")
      return pow2(ranks) ? ompi(3, "recursive_doubling")
                         : ompi(2, "bruck", "Open MPI's recursive doubling is Bruck's off 2^k");
    if (a == "bruck") return ompi(2, "bruck");
    if (a == "neighbor_exchange") return ompi(5, "neighbor");
    if (a == "gather_bcast")
      return ompi(1, "linear", "a linear gather and bcast, not grove's radix trees");
    return none();
  }
  if (c == "allgatherv") {
    if (a == "ring") return ompi(3, "ring");
    if (a == "gather_bcast")
      return ompi(1, "default", "gatherv then bcast, not grove's radix trees");
    return none();
  }
  if (c == "alltoall") {
    if (a == "linear") return ompi(1, "linear");
    if (a == "pairwise")
      return ompi(2, "pairwise",
                  "one exchange at a time; grove's posting depth is not in 4.x rules");
    if (a == "bruck") return ompi(3, "modified_bruck");
    return none();
  }
  if (c == "reduce") {
    if (a == "binomial") return ompi(5, "binomial");
    if (a == "rabenseifner") return ompi(7, "rabenseifner");
    return none();
  }
  if (c == "allreduce") {
    if (a == "recursive_doubling") return ompi(3, "recursive_doubling");
    if (a == "ring") return ompi(4, "ring");
    if (a == "rabenseifner") return ompi(6, "rabenseifner");
    return none();
  }
  if (c == "reduce_scatter") {  // grove's is the block form: REDUCESCATTERBLOCK
    if (a == "recursive_halving") return ompi(3, "recursive_halving");
    return none();
  }
  if (c == "barrier") {
    if (a == "dissemination")
      return ompi(4, "bruck");  // Open MPI's "bruck" barrier is dissemination
    if (a == "flat") return ompi(1, "linear");
    if (a == "knomial" && s.radix == 2) return ompi(6, "tree", "a binomial fan-in and fan-out");
    return none();
  }
  return none();
}

PeerAlgorithm mpich_algorithm(const coll::AlgorithmSpec& s, int ranks) {
  const std::string& c = s.collective;
  const std::string& a = s.name;
  if (c == "bcast") {
    if (a == "binomial") return mpich("MPIR_Bcast_intra_binomial");
    if (a == "scatter_allgather") return mpich("MPIR_Bcast_intra_scatter_ring_allgather");
    return none();
  }
  if (c == "scatter") return a == "binomial" ? mpich("MPIR_Scatter_intra_binomial") : none();
  if (c == "gather") return a == "binomial" ? mpich("MPIR_Gather_intra_binomial") : none();
  if (c == "allgather") {
    if (a == "ring") return mpich("MPIR_Allgather_intra_ring");
    if (a == "recursive_doubling" && pow2(ranks))  // MPICH's needs a power of two
      return mpich("MPIR_Allgather_intra_recursive_doubling");
    if (a == "bruck") return mpich("MPIR_Allgather_intra_brucks");
    return none();
  }
  if (c == "allgatherv") return a == "ring" ? mpich("MPIR_Allgatherv_intra_ring") : none();
  if (c == "alltoall") {
    if (a == "linear")
      return mpich("MPIR_Alltoall_intra_scattered",
                   "MPICH posts MPIR_CVAR_ALLTOALL_THROTTLE exchanges at a time");
    if (a == "pairwise") return mpich("MPIR_Alltoall_intra_pairwise");
    if (a == "bruck") return mpich("MPIR_Alltoall_intra_brucks");
    return none();
  }
  if (c == "reduce") {
    if (a == "binomial") return mpich("MPIR_Reduce_intra_binomial");
    if (a == "rabenseifner") return mpich("MPIR_Reduce_intra_reduce_scatter_gather");
    return none();
  }
  if (c == "allreduce") {
    if (a == "recursive_doubling") return mpich("MPIR_Allreduce_intra_recursive_doubling");
    if (a == "rabenseifner") return mpich("MPIR_Allreduce_intra_reduce_scatter_allgather");
    return none();
  }
  if (c == "reduce_scatter") {
    if (a == "recursive_halving") return mpich("MPIR_Reduce_scatter_block_intra_recursive_halving");
    if (a == "ring")
      return mpich("MPIR_Reduce_scatter_block_intra_pairwise",
                   "pairwise exchanges: the ring's volume and step count, other partners");
    return none();
  }
  if (c == "barrier") {
    return a == "dissemination" ? mpich("MPIR_Barrier_intra_dissemination") : none();
  }
  return none();
}

std::string mapping_table_markdown() {
  std::string out = "| collective | grove | Open MPI 4.1 coll/tuned | MPICH 4.0 CSEL |\n";
  out += "|---|---|---|---|\n";
  for (const std::string& c : coll::collectives_declared()) {
    for (const coll::AlgorithmInfo& info : coll::algorithms_of(c)) {
      coll::AlgorithmSpec s;
      s.collective = c;
      s.name = info.name;
      s.radix = info.default_radix;
      s.segment = info.takes_segment ? 65536 : 0;
      // Power-of-two sizes: the restricted algorithms show their mapping.
      const PeerAlgorithm o = openmpi_algorithm(s, 8, info.default_radix);
      const PeerAlgorithm m = mpich_algorithm(s, 8);
      auto cell = [](const PeerAlgorithm& p, bool number) {
        if (!p.exists) return std::string("none");
        std::string t = number ? fmt::format("{} `{}`", p.id, p.name) : fmt::format("`{}`", p.name);
        if (!p.approximate.empty()) t += " (" + p.approximate + ")";
        return t;
      };
      std::string grove = info.name;
      if (info.default_radix > 0) grove += ":K";
      if (info.takes_segment) grove += ":seg=S";
      out += fmt::format("| {} | `{}` | {} | {} |\n", c, grove, cell(o, true), cell(m, false));
    }
  }
  return out;
}

}  // namespace grove::tuning
