// The fence's parameters. The two radices are shared with allgather's
// gather_bcast and declared once, in src/coll/allgather.cpp: rollup_radix
// (the routing tree; the "routing_radix") and release_radix.

#include <atomic>
#include <cstdio>

#include <fmt/format.h>

#include "coll/algorithm.hpp"
#include "coll/allgather.hpp"
#include "core/params.hpp"
#include "grove/error.hpp"
#include "runtime/fence_engine.hpp"

namespace grove::runtime {
namespace {

const params::BoolParam low_radix_release_param{
    "low_radix_release", true,
    "fence: the release leaves the routing tree for the derived release tree at release_radix; "
    "off: every release travels the routing tree and none of the derived-tree machinery runs "
    "(docs/fence.md)"};
const params::IntParam fence_release_delay_ms{
    "fence_release_delay_ms", 0, 0, 3600000,
    "fence: a non-root relay holds its first release forward this long (after delivering "
    "locally), to widen the window a fault test can land in; 0 in production"};
// 0 is store-and-forward (the whole payload per message); otherwise at
// least kMinReleaseSegment, so a segment's bytes outweigh its ~60-byte
// header and a 16 MiB release is at most 64 Ki messages per edge.
constexpr uint64_t kMinReleaseSegment = 256;
const params::BytesParam fence_release_segment{
    "fence_release_segment", 64 * 1024, 0, uint64_t{1} << 30,
    "fence: bytes per release segment; a relay passes each segment on as it arrives (pipelined "
    "release). 0: the whole payload in one message (store-and-forward); else at least 256"};
const params::BoolParam fence_timing_param{
    "fence_timing", false,
    "fence: the root stamps when it starts a release and each rank when it holds the payload "
    "(grove bench --coll fence reports release coverage from these)"};

[[maybe_unused]] const bool registered = [] {
  coll::register_algorithms(
      "fence",
      {
          {.name = "routing",
           .doc = "rollup and release both on the routing tree (rollup_radix); "
                  "low_radix_release off"},
          {.name = "release",
           .default_radix = 4,
           .doc = "rollup on the routing tree, release on the derived release tree at radix K"},
      });
  return true;
}();

const params::StringParam fence_algorithm{
    "fence_algorithm", "auto",
    "Forces the fence's release topology (routing, release:K) over low_radix_release and "
    "release_radix, or leaves them to decide (auto)",
    coll::algorithm_validator("fence")};

std::atomic<bool> warned_equal_radices{false};

}  // namespace

FenceConfig FenceConfig::from_params() {
  FenceConfig config;
  config.routing_radix = coll::rollup_radix();
  config.release_radix = coll::release_radix();
  config.low_radix_release = low_radix_release_param.get();
  config.release_delay = static_cast<double>(fence_release_delay_ms.get()) / 1000.0;
  config.release_segment = fence_release_segment.get();
  if (config.release_segment != 0 && config.release_segment < kMinReleaseSegment) {
    throw Error(
        Errc::invalid_parameter,
        fmt::format("parameter {}: {} bytes is below the smallest segment, {} bytes "
                    "(0: the whole payload in one message)",
                    fence_release_segment.name(), config.release_segment, kMinReleaseSegment));
  }
  config.timing = fence_timing_param.get();
  const coll::AlgorithmSpec forced = coll::parse_algorithm("fence", fence_algorithm.get());
  if (forced.name == "routing") {
    config.low_radix_release = false;
  } else if (forced.name == "release") {
    config.low_radix_release = true;
    config.release_radix = forced.radix;
  }
  return config;
}

// Equal radices make the release tree the routing tree (same parent and
// children for every rank and failure pattern), carried through more
// machinery: never faster. The run continues; the warning is printed once.
void warn_if_release_is_routing(const FenceConfig& config, int rank) {
  if (!config.low_radix_release || config.release_radix != config.routing_radix) return;
  if (rank != config.root || warned_equal_radices.exchange(true)) return;
  fmt::print(stderr,
             "grove: warning: release_radix = rollup_radix = {}: the fence's release tree is its "
             "routing tree, carried through more machinery; set low_radix_release=false or a "
             "smaller release_radix\n",
             config.release_radix);
}

}  // namespace grove::runtime
