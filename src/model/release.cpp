#include "model/release.hpp"

#include <fmt/format.h>

#include "coll/algorithm.hpp"
#include "coll/bcast.hpp"
#include "coll/plan.hpp"
#include "coll/tree_steps.hpp"
#include "core/params.hpp"
#include "grove/error.hpp"
#include "topo/tree.hpp"

namespace grove::model {

std::string ReleaseShape::to_string() const {
  if (segment == 0) return fmt::format("kary:{}", radix);
  return fmt::format("kary:{},seg={}", radix, params::format_bytes(segment));
}

ReleaseShape parse_release(std::string_view text) {
  ReleaseShape shape;
  std::string_view rest = text;
  const auto comma = rest.find(",seg=");
  std::string_view tree = rest.substr(0, comma);
  if (comma != std::string_view::npos) {
    shape.segment = params::parse_bytes(rest.substr(comma + 5), "release segment");
    if (shape.segment == 0)
      throw Error(Errc::invalid_argument, fmt::format("release '{}': segment must be > 0", text));
  }
  // The tree part is validated by the bcast collective's own parser.
  const coll::AlgorithmSpec spec = coll::parse_algorithm("bcast", tree);
  if (spec.name != "kary" && spec.name != "binary")
    throw Error(Errc::invalid_argument,
                fmt::format("release '{}': the release tree is kary:R (docs/fence.md)", text));
  shape.radix = spec.name == "binary" ? 2 : spec.radix;
  return shape;
}

sched::Schedule build_release(const ReleaseShape& shape, int size, int root, int rank,
                              size_t bytes) {
  if (shape.segment == 0 || bytes <= shape.segment) {
    const coll::AlgorithmSpec spec =
        coll::parse_algorithm("bcast", fmt::format("kary:{}", shape.radix));
    return coll::build_bcast(coll::BcastArgs{rank, size, root, bytes, spec});
  }
  const topo::Tree tree = topo::make_tree(topo::Shape::kary, size, root, shape.radix);
  coll::Plan plan("release " + shape.to_string());
  // Segment i on channel i % 64; Plan orders reused channels per stream.
  int channel = 0;
  for (size_t offset = 0; offset < bytes; offset += shape.segment) {
    const size_t length = std::min<size_t>(shape.segment, bytes - offset);
    coll::tree_bcast(plan, tree, rank, coll::output_region(offset, length), channel);
    channel = (channel + 1) % coll::kChannels;
  }
  return plan.finish();
}

}  // namespace grove::model
