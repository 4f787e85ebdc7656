#pragma once
// Algorithm names and their parameters: "binomial", "knomial:4", "kary:3",
// "pipeline:seg=64KiB", "pipeline", "auto".
//
// Grammar: NAME [":" ARG ("," ARG)*], ARG = INTEGER (the radix) | "k=" INTEGER
// | "seg=" BYTES (params::parse_bytes: 4096, 64KiB, 1MiB). Which NAMEs exist
// and which ARGs each takes is declared once per collective, by the
// collective's own file (register_algorithms), so the parser, `grove params`
// validation and the bench's algorithm lists all agree. Every collective
// also accepts "auto" (no arguments): the collective's selection decides.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/params.hpp"

namespace grove::coll {

struct AlgorithmSpec {
  std::string collective;  // "bcast", "barrier", ...
  std::string name;        // "knomial", "pipeline", "auto"
  int radix = 0;           // algorithms with a radix; 0 otherwise
  uint64_t segment = 0;    // "seg=": bytes per segment; 0 = the collective's parameter decides

  bool is_auto() const { return name == "auto"; }
  // Canonical form: "knomial:4", "pipeline:seg=64KiB", "pipeline", "kary:3,seg=1MiB".
  std::string to_string() const;
  // A stable 8-bit hash of (collective, canonical form) for the tag's stamp
  // field: peers that disagree on the algorithm very likely differ here.
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
  std::string doc;  // one line, for listings
  // An example spec for lists of "every algorithm" (bench --algo all,
  // tests); empty: the bare name.
  std::string example;
};

// Declares a collective's algorithms (call once, at load time, from the
// collective's file). Declaring a collective twice is an internal error.
void register_algorithms(std::string_view collective, std::vector<AlgorithmInfo> algorithms);

// The algorithms declared for `collective`, in declaration order; throws
// grove::Error(invalid_argument) for an unknown collective.
std::vector<AlgorithmInfo> algorithms_of(std::string_view collective);
// One canonical spec per algorithm (its `example`, else its name with
// defaults), excluding "auto".
std::vector<std::string> algorithm_examples(std::string_view collective);

// Parses and validates. Throws grove::Error(invalid_argument) naming the
// collective, the text and the cause (unknown name with the known ones
// listed, radix out of range, unknown or repeated argument, bad size).
AlgorithmSpec parse_algorithm(std::string_view collective, std::string_view text);

// For a string parameter such as `bcast_algorithm`: accepts exactly what
// parse_algorithm accepts (and anything while the collective has not yet
// registered its algorithms, i.e. during static initialisation).
params::Validator algorithm_validator(std::string collective);

}  // namespace grove::coll
