#pragma once
// The port model `grove tune`, `grove explain` and the report predict with:
// a probe's pLogP table (u = w = g(m), lambda = L) or the Hockney fit of
// that table (alpha + m beta; model/probe_fit.hpp), as model/cost.hpp makes
// them.

#include <string>

#include "coll/cost_terms.hpp"

namespace grove::tuning {

struct ModelSource {
  coll::PortModel port;
  std::string plogp;        // the table's path
  std::string description;  // one line: what the model is and its key numbers
};

// `kind` is "plogp" or "hockney". Throws grove::Error naming the file and
// line for a bad table (plogp_table.hpp), or usage for an unknown kind.
ModelSource load_model(const std::string& plogp_path, const std::string& kind = "plogp");

}  // namespace grove::tuning
