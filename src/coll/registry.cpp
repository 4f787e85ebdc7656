#include "coll/registry.hpp"

#include <array>
#include <memory>

#include "core/params.hpp"

namespace grove::coll {
namespace {

constexpr size_t kCollectives = static_cast<size_t>(Collective::reduce_scatter) + 1;

// One parameter per collective, made when the collective declares its
// algorithms (while libgrove loads) and never freed.
std::array<params::StringParam*, kCollectives>& algorithm_params() {
  static std::array<params::StringParam*, kCollectives> all{};
  return all;
}

// "flat, chain, pipeline[:seg=S], kary:K, ...": the names with their arguments.
std::string listing(const std::vector<AlgorithmInfo>& algorithms) {
  std::string out;
  for (const AlgorithmInfo& a : algorithms) {
    if (!out.empty()) out += ", ";
    out += a.name;
    std::string args;
    if (a.default_radix > 0) args += "K";
    if (a.takes_segment) args += std::string(args.empty() ? "" : ",") + "seg=S";
    if (a.takes_posts) args += std::string(args.empty() ? "" : ",") + "posts=P";
    if (!args.empty())
      out += (a.default_radix > 0 ? ":" : "[:") + args + (a.default_radix > 0 ? "" : "]");
  }
  return out;
}

}  // namespace

void declare_collective(Collective collective, std::vector<AlgorithmInfo> algorithms) {
  const std::string name(collective_name(collective));
  const std::string doc = fmt::format(
      "Forces the {} algorithm ({}) or leaves it to auto (selection: grove select --show)", name,
      listing(algorithms));
  register_algorithms(name, std::move(algorithms));
  algorithm_params()[static_cast<size_t>(collective)] =
      new params::StringParam(name + "_algorithm", "auto", doc, algorithm_validator(name));
}

const std::string& forced_algorithm_text(Collective collective) {
  static const std::string automatic = "auto";
  const params::StringParam* p = algorithm_params()[static_cast<size_t>(collective)];
  return p != nullptr ? p->get() : automatic;
}

}  // namespace grove::coll
