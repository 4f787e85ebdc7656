#pragma once
// What selection (coll/select.hpp) gives a non-blocking call of these
// builder arguments: the tables' choice for "auto", or a forced spec with
// its open arguments completed.

#include <string>

#include "coll/select.hpp"

namespace grove::coll {

template <class Args>
AlgorithmSpec resolved(const Args& args, const std::string& algorithm = "auto") {
  const CallFacts f = facts(args);
  return resolve(f, parse_algorithm(collective_name(f.collective), algorithm));
}

}  // namespace grove::coll
