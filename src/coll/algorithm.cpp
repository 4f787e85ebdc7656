#include "coll/algorithm.hpp"

#include <cctype>
#include <charconv>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "coll/collective.hpp"
#include "grove/error.hpp"

namespace grove::coll {

namespace {

constexpr uint64_t kMaxSegment = uint64_t{1} << 30;

constexpr uint32_t kMaxPosts = 1u << 20;

// Written only while libgrove loads (each collective's file declares its
// algorithms then); read-only afterwards, so references into it stay valid.
struct Catalog {
  std::mutex mutex;
  std::map<std::string, std::vector<AlgorithmInfo>, std::less<>> collectives;
};

Catalog& catalog() {
  static Catalog c;
  return c;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return s;
}

std::string known_names(const std::vector<AlgorithmInfo>& algorithms) {
  std::string out = "auto";
  for (const AlgorithmInfo& a : algorithms)
    out += ", " + a.name;
  return out;
}

}  // namespace

namespace {

std::string canonical(const AlgorithmSpec& spec, bool with_posts) {
  std::string out = spec.name;
  char separator = ':';
  if (spec.radix > 0) {
    out += fmt::format("{}{}", separator, spec.radix);
    separator = ',';
  }
  if (spec.segment > 0) {
    out += fmt::format("{}seg={}", separator, params::format_bytes(spec.segment));
    separator = ',';
  }
  if (with_posts && spec.posts > 0) out += fmt::format("{}posts={}", separator, spec.posts);
  return out;
}

}  // namespace

std::string AlgorithmSpec::to_string() const {
  return canonical(*this, true);
}

uint8_t AlgorithmSpec::stamp() const {
  // FNV-1a over "collective/canonical", folded to 8 bits. Stable across
  // builds and machines: it is part of the wire format.
  uint64_t h = 14695981039346656037ull;
  auto mix = [&](std::string_view s) {
    for (char c : s) {
      h ^= static_cast<unsigned char>(c);
      h *= 1099511628211ull;
    }
  };
  mix(collective);
  mix("/");
  mix(canonical(*this, false));
  uint8_t folded = 0;
  for (int shift = 0; shift < 64; shift += 8)
    folded ^= static_cast<uint8_t>(h >> shift);
  return folded;
}

void register_algorithms(std::string_view collective, std::vector<AlgorithmInfo> algorithms) {
  Catalog& c = catalog();
  std::lock_guard lock(c.mutex);
  if (c.collectives.count(collective)) {
    throw Error(Errc::internal,
                fmt::format("algorithms of collective {} declared twice", collective));
  }
  c.collectives.emplace(std::string(collective), std::move(algorithms));
}

// By name, not by declaration: static initialisers run in an order the
// build decides (a unity build puts files in batches). The collectives of
// coll::Collective first, then the others (the fence).
std::vector<std::string> collectives_declared() {
  Catalog& c = catalog();
  std::lock_guard lock(c.mutex);
  std::vector<std::string> order;
  for (int pass = 0; pass < 2; ++pass) {
    for (const auto& [name, algorithms] : c.collectives) {
      if (collective_named(name).has_value() == (pass == 0)) order.push_back(name);
    }
  }
  return order;
}

const AlgorithmInfo& algorithm_info(std::string_view collective, std::string_view name) {
  Catalog& c = catalog();
  std::lock_guard lock(c.mutex);
  auto it = c.collectives.find(collective);
  if (it == c.collectives.end()) {
    throw Error(Errc::invalid_argument,
                fmt::format("unknown collective '{}' (no algorithms declared)", collective));
  }
  for (const AlgorithmInfo& a : it->second)
    if (a.name == name) return a;
  throw Error(Errc::invalid_argument, fmt::format("{}: unknown algorithm '{}' (known: {})",
                                                  collective, name, known_names(it->second)));
}

std::vector<AlgorithmInfo> algorithms_of(std::string_view collective) {
  Catalog& c = catalog();
  std::lock_guard lock(c.mutex);
  auto it = c.collectives.find(collective);
  if (it == c.collectives.end()) {
    throw Error(Errc::invalid_argument,
                fmt::format("unknown collective '{}' (no algorithms declared)", collective));
  }
  return it->second;
}

namespace {

// ranks 0: whatever their number.
std::vector<std::string> examples(std::string_view collective, bool with_scheduleless,
                                  int ranks = 0) {
  std::vector<std::string> out;
  for (int pass = 0; pass < (with_scheduleless ? 2 : 1); ++pass) {
    for (const AlgorithmInfo& a : algorithms_of(collective)) {
      if (a.schedule != (pass == 0)) continue;
      if (ranks > 0 && a.cannot_run && !a.cannot_run(ranks).empty()) continue;
      out.push_back(
          parse_algorithm(collective, a.example.empty() ? a.name : a.example).to_string());
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> algorithm_examples(std::string_view collective) {
  return examples(collective, false);
}

std::vector<std::string> blocking_algorithm_examples(std::string_view collective) {
  return examples(collective, true);
}

std::vector<std::string> algorithm_examples_for(std::string_view collective, int ranks,
                                                bool blocking) {
  return examples(collective, blocking, ranks);
}

AlgorithmSpec parse_algorithm(std::string_view collective, std::string_view text) {
  const std::string_view whole = trim(text);
  // "auto" is valid for every collective before any registered its
  // algorithms: parameter defaults are validated during static
  // initialisation, in no guaranteed order across files.
  if (whole == "auto") {
    AlgorithmSpec spec;
    spec.collective = std::string(collective);
    spec.name = "auto";
    return spec;
  }
  const std::vector<AlgorithmInfo> algorithms = algorithms_of(collective);
  auto bad = [&](const std::string& cause) -> Error {
    return Error(Errc::invalid_argument,
                 fmt::format("{} algorithm '{}': {}", collective, whole, cause));
  };

  const size_t colon = whole.find(':');
  const std::string_view name = trim(whole.substr(0, colon));
  std::string_view args =
      colon == std::string_view::npos ? std::string_view{} : whole.substr(colon + 1);
  AlgorithmSpec spec;
  spec.collective = std::string(collective);
  spec.name = std::string(name);
  if (name == "auto") {
    if (colon != std::string_view::npos) throw bad("auto takes no arguments");
    return spec;
  }
  const AlgorithmInfo* info = nullptr;
  for (const AlgorithmInfo& a : algorithms)
    if (a.name == name) info = &a;
  if (info == nullptr) {
    throw bad(fmt::format("unknown algorithm '{}' (known: {})", name, known_names(algorithms)));
  }
  if (colon != std::string_view::npos && trim(args).empty()) throw bad("empty argument list");

  bool have_radix = false;
  while (colon != std::string_view::npos && !args.empty()) {
    const size_t comma = args.find(',');
    const std::string_view arg = trim(args.substr(0, comma));
    args = comma == std::string_view::npos ? std::string_view{} : args.substr(comma + 1);
    if (comma != std::string_view::npos && trim(args).empty()) throw bad("trailing ','");

    const size_t eq = arg.find('=');
    const std::string_view key = eq == std::string_view::npos ? "k" : trim(arg.substr(0, eq));
    const std::string_view value = eq == std::string_view::npos ? arg : trim(arg.substr(eq + 1));
    if (key == "k" || key == "radix") {
      if (info->default_radix == 0) throw bad(fmt::format("{} takes no radix", info->name));
      if (have_radix) throw bad("radix given twice");
      int radix = 0;
      auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), radix);
      if (ec != std::errc() || ptr != value.data() + value.size() || value.empty()) {
        throw bad(fmt::format("'{}' is not an integer radix", value));
      }
      if (radix < info->min_radix || radix > info->max_radix) {
        throw bad(
            fmt::format("radix {} is outside [{}, {}]", radix, info->min_radix, info->max_radix));
      }
      spec.radix = radix;
      have_radix = true;
    } else if (key == "seg") {
      if (!info->takes_segment) throw bad(fmt::format("{} takes no segment size", info->name));
      if (spec.segment != 0) throw bad("seg given twice");
      uint64_t segment = 0;
      try {
        segment = params::parse_bytes(value, "seg");
      } catch (const Error& e) {
        throw bad(e.what());
      }
      if (segment < 1 || segment > kMaxSegment) {
        throw bad(
            fmt::format("seg={} is outside [1, {}]", value, params::format_bytes(kMaxSegment)));
      }
      spec.segment = segment;
    } else if (key == "posts") {
      if (!info->takes_posts) throw bad(fmt::format("{} takes no posts=", info->name));
      if (spec.posts != 0) throw bad("posts given twice");
      uint32_t posts = 0;
      auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), posts);
      if (ec != std::errc() || ptr != value.data() + value.size() || value.empty() || posts < 1 ||
          posts > kMaxPosts) {
        throw bad(fmt::format("posts={} is not a count in [1, {}]", value, kMaxPosts));
      }
      spec.posts = posts;
    } else {
      throw bad(fmt::format("unknown argument '{}'", arg));
    }
  }
  if (!have_radix) spec.radix = info->default_radix;
  return spec;
}

params::Validator algorithm_validator(std::string collective) {
  return [collective](std::string_view value) -> std::string {
    // A parameter's default is validated when it is declared, during static
    // initialisation, possibly before the collective's file has registered
    // its algorithms (initialisation order across files is unspecified).
    // Accept then; every value is parsed again, strictly, where it is used.
    {
      Catalog& c = catalog();
      std::lock_guard lock(c.mutex);
      if (!c.collectives.count(collective)) return {};
    }
    try {
      parse_algorithm(collective, value);
      return {};
    } catch (const Error& e) {
      return e.what();
    }
  };
}

}  // namespace grove::coll
