#pragma once
// What every peer driver (Open MPI, MPICH, Gloo) shares: the command line of
// `grove bench` (the subset that shapes cells), the plan of cells in the
// suite's order, and the per-cell sequence of grove's runner: prepare, one
// call, verify, warm-up, the timed loop of suite/cell_loop.hpp, stamps to
// rank 0, raw TSV rows. Only the library-specific steps differ.

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "suite/cell_loop.hpp"
#include "suite/cells.hpp"
#include "suite/tsv.hpp"

namespace grove::bench::peer {

struct Options {
  std::vector<std::string> collectives;  // empty: every one the peer has
  std::vector<size_t> sizes{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576};
  LoopLimits limits;
  int warmup = 3;
  std::string tsv;      // raw samples go here (rank 0)
  std::string library;  // TSV library column
  int fork_ranks = 0;   // gloo only: start this many ranks by fork
  bool quiet = false;   // no table on stdout
};

// Parses the options shared with `grove bench`: --coll, --sizes, --cadence,
// --cell-time, --warmup, --min-iters, --max-iters, --tsv, --library, --quiet,
// -n/--np (gloo). --algo accepts only "native"/"auto" (a peer has one
// algorithm: the library's own choice). Throws grove::Error(usage).
Options parse_options(int argc, char** argv, const std::string& default_library);

// "1:4MiB", "1:1MiB:4", "0,1,7,4096", suffixes B/K/KiB/M/MiB/G/GiB, as
// `grove bench --sizes`.
std::vector<size_t> parse_sizes(std::string_view spec);

// The library-side steps. All calls are collective over the job.
class Job {
 public:
  virtual ~Job() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual void barrier() = 0;
  virtual bool agree(bool rank0_says) = 0;
  // Every rank's `mine` (all the same length) on rank 0; empty elsewhere.
  virtual std::vector<std::vector<double>> gather(const std::vector<double>& mine) = 0;
};

class Collective {
 public:
  virtual ~Collective() = default;
  // Allocates buffers for `bytes` (already rounded) and fills inputs with
  // cells::pattern for this rank and `generation`.
  virtual void prepare(size_t bytes, uint32_t generation) = 0;
  // False for a size the library cannot do (its cell is skipped and said so).
  virtual bool supports(size_t /*bytes*/) const { return true; }
  virtual void call() = 0;
  // Throws grove::Error(internal) naming rank, offset and values on the
  // first wrong byte or element.
  virtual void verify() = 0;
};

// nullptr: the library has no such collective (its cells are skipped).
using CollectiveFactory = std::unique_ptr<Collective> (*)(Job& job, const cells::Spec& spec);

// Runs every planned cell and, on rank 0, writes the TSV and prints a table.
// `description` (library and version, settings) heads the output.
void run(Job& job, CollectiveFactory factory, const Options& options,
         const std::string& description);

// The suite's collectives, as the peer drivers implement them.
enum class Kind {
  bcast,
  scatter,
  gather,
  allgather,
  alltoall,
  barrier,
  allreduce,
  reduce,
  reduce_scatter,
  allgatherv,
  alltoallv
};

// The kind of the suite's collective `name` ("bcast", ...), if it has one.
std::optional<Kind> kind_named(std::string_view name);

// verify() of every peer: checks one rank's result of a cell of `block`
// bytes after one call. `recv` holds byte results (rank 0's for gather),
// `frecv` float results (reductions: rank 0's for reduce); throws naming
// the first mismatch.
void verify_result(Kind kind, std::string_view name, int rank, int size, size_t block,
                   std::span<const std::byte> recv, std::span<const float> frecv,
                   uint32_t generation);

// Checks for verify(): throws naming the first mismatch.
// `got[i]` must be cells::pattern(source_rank, source_offset + i, generation).
void expect_pattern(std::string_view collective, int rank, std::span<const std::byte> got,
                    int source_rank, size_t source_offset, uint32_t generation);
// `got[i]` must be cells::expected_sum(ranks, first_index + i, generation).
void expect_sums(std::string_view collective, int rank, std::span<const float> got,
                 size_t first_index, int ranks, uint32_t generation);

}  // namespace grove::bench::peer
