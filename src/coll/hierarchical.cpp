#include "coll/hierarchical.hpp"

namespace grove::coll {

AlgorithmInfo hierarchical_algorithm() {
  return AlgorithmInfo{
      .name = "hier",
      .doc =
          "per host (shared memory), then among one leader per host (algorithm by the "
          "selection tables), then per host: blocking calls on communicators spanning hosts",
      .schedule = false};
}

}  // namespace grove::coll
