#pragma once
// Algorithm names and their parameters: "binomial", "knomial:4", "kary:3",
// "pipeline:seg=64KiB", "pipeline", "auto".
//
// Grammar: NAME [":" ARG ("," ARG)*], ARG = INTEGER (the radix) | "k=" INTEGER
// | "seg=" BYTES (params::parse_bytes: 4096, 64KiB, 1MiB) | "posts=" INTEGER.
// Which NAMEs exist and which ARGs each takes is declared once per
// collective, in the collective's own file (its registry, coll/registry.hpp),
// so the parser, the `<collective>_algorithm` parameter, `grove params`, the
// bench's and the tests' algorithm lists and the cost models all agree.
// Every collective also accepts "auto" (no arguments): selection decides
// (coll/select.hpp).

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "coll/cost_terms.hpp"
#include "core/params.hpp"

namespace grove::coll {

struct AlgorithmSpec {
  std::string collective;  // "bcast", "barrier", ...
  std::string name;        // "knomial", "pipeline", "auto"
  int radix = 0;           // algorithms with a radix; 0 otherwise
  uint64_t segment = 0;    // "seg=": bytes per segment; 0 = selection decides
  // "posts=": the most sends, and separately receives, in flight per rank
  // (pairwise alltoall); 0 = selection decides. Bounds only this rank's own
  // messages, so it is not part of the stamp.
  uint32_t posts = 0;

  bool is_auto() const { return name == "auto"; }
  // Canonical form: "knomial:4", "pipeline:seg=64KiB", "pipeline", "kary:3,seg=1MiB",
  // "pairwise:posts=16".
  std::string to_string() const;
  // A stable 8-bit hash of (collective, canonical form without posts) for
  // the tag's stamp field: peers that disagree on the algorithm very likely
  // differ here.
  uint8_t stamp() const;
  bool operator==(const AlgorithmSpec&) const = default;
};

// What one algorithm of a collective accepts.
struct AlgorithmInfo {
  std::string name;
  // > 0: the algorithm takes a radix, and this is its value when omitted.
  int default_radix = 0;
  int min_radix = 2;
  int max_radix = 1 << 20;
  bool takes_segment = false;
  bool takes_posts = false;
  std::string doc;  // one line, for listings
  // An example spec for lists of "every algorithm" (bench --algo all,
  // tests); empty: the bare name.
  std::string example;
  // False for an algorithm that runs without a schedule (the shared-memory
  // engine, `shm`): it serves blocking calls only, and selection passes it
  // over for non-blocking and persistent ones.
  bool schedule = true;
  // The segment size when neither the spec nor a selection row gives one
  // (takes_segment only).
  std::function<uint64_t()> default_segment;
  // Why this algorithm cannot run a call of `ranks` ranks (empty: it can);
  // selection passes it over, a forced choice is refused with the reason.
  std::function<std::string(int ranks)> cannot_run;
  ClosedForm cost;  // cost.cost empty: not modelled
};

// Declares a collective's algorithms (call once, at load time, from the
// collective's file). Declaring a collective twice is an internal error.
void register_algorithms(std::string_view collective, std::vector<AlgorithmInfo> algorithms);

// The algorithms declared for `collective`, in declaration order; throws
// grove::Error(invalid_argument) for an unknown collective.
std::vector<AlgorithmInfo> algorithms_of(std::string_view collective);
// One algorithm's declaration; throws grove::Error(invalid_argument) naming
// the known ones when there is none of that name.
const AlgorithmInfo& algorithm_info(std::string_view collective, std::string_view name);
// Every collective that declared algorithms: grove's collectives by name,
// then the others (the fence) by name, whatever order they declared in.
std::vector<std::string> collectives_declared();
// One canonical spec per schedule algorithm (its `example`, else its name
// with defaults), excluding "auto" and algorithms without a schedule
// (`shm`): what the collective's builder can build.
std::vector<std::string> algorithm_examples(std::string_view collective);
// The same, followed by the algorithms without a schedule: every algorithm a
// blocking call can be forced to.
std::vector<std::string> blocking_algorithm_examples(std::string_view collective);
// The examples of the algorithms that can run on `ranks` ranks (their
// cannot_run says nothing), with those without a schedule when `blocking`
// (`grove bench --algo all`, the tests' algorithm lists).
std::vector<std::string> algorithm_examples_for(std::string_view collective, int ranks,
                                                bool blocking);

// Parses and validates. Throws grove::Error(invalid_argument) naming the
// collective, the text and the cause (unknown name with the known ones
// listed, radix out of range, unknown or repeated argument, bad size).
AlgorithmSpec parse_algorithm(std::string_view collective, std::string_view text);

// For a string parameter such as `bcast_algorithm`: accepts exactly what
// parse_algorithm accepts (and anything while the collective has not yet
// registered its algorithms, i.e. during static initialisation).
params::Validator algorithm_validator(std::string collective);

}  // namespace grove::coll
