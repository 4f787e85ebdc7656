#include "peer_common.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "core/stats.hpp"
#include "grove/error.hpp"

namespace grove::bench::peer {
namespace {

// The algorithm column of every peer row: the library's own selection.
constexpr const char* kAlgorithm = "native";

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t end = std::min(text.find(separator, pos), text.size());
    out.emplace_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

uint64_t parse_bytes(std::string_view text, std::string_view what) {
  uint64_t number = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec != std::errc() || ptr == text.data()) {
    throw Error(Errc::usage, fmt::format("{}: '{}' is not a byte count", what, text));
  }
  std::string suffix(ptr, text.data() + text.size());
  std::transform(suffix.begin(), suffix.end(), suffix.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  uint64_t unit = 1;
  if (suffix.empty() || suffix == "b")
    unit = 1;
  else if (suffix == "k" || suffix == "kib")
    unit = 1ull << 10;
  else if (suffix == "m" || suffix == "mib")
    unit = 1ull << 20;
  else if (suffix == "g" || suffix == "gib")
    unit = 1ull << 30;
  else
    throw Error(Errc::usage, fmt::format("{}: unknown unit '{}'", what, suffix));
  if (number > UINT64_MAX / unit) throw Error(Errc::usage, fmt::format("{}: too large", what));
  return number * unit;
}

double parse_number(std::string_view text, std::string_view option, double lo, double hi) {
  const std::string copy(text);
  char* end = nullptr;
  const double v = std::strtod(copy.c_str(), &end);
  if (copy.empty() || end != copy.c_str() + copy.size() || !(v >= lo && v <= hi)) {
    throw Error(Errc::usage,
                fmt::format("{} '{}': expected a number in [{}, {}]", option, text, lo, hi));
  }
  return v;
}

// The calls the timed loop makes, over a job and one collective.
struct LoopOps {
  Job& job;
  Collective& collective;
  void barrier() { job.barrier(); }
  void call() { collective.call(); }
  bool agree(bool rank0_says) { return job.agree(rank0_says); }
};

struct Planned {
  cells::Spec spec;
  std::shared_ptr<Collective> collective;
  size_t bytes;
};

std::vector<Planned> make_plan(Job& job, CollectiveFactory factory, const Options& options) {
  for (const std::string& wanted : options.collectives) {
    if (!cells::find_spec(wanted)) {
      throw Error(Errc::usage, fmt::format("unknown collective '{}'", wanted));
    }
  }
  std::vector<Planned> plan;
  for (const cells::Spec& spec : cells::kSpecs) {
    const auto& wanted = options.collectives;
    if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), spec.name) == wanted.end()) {
      continue;
    }
    std::shared_ptr<Collective> collective = factory(job, spec);
    if (!collective) {
      if (job.rank() == 0 && !wanted.empty()) {
        fmt::print(stderr, "# {}: no {} in this library, its cells are skipped\n", options.library,
                   spec.name);
      }
      continue;
    }
    std::vector<size_t> sizes;
    for (size_t s : options.sizes) {
      const size_t rounded = cells::round_bytes(spec, s);
      if (std::find(sizes.begin(), sizes.end(), rounded) == sizes.end()) sizes.push_back(rounded);
    }
    for (size_t bytes : sizes) {
      if (collective->supports(bytes)) {
        plan.push_back({spec, collective, bytes});
      } else if (job.rank() == 0) {
        fmt::print(stderr, "# {}: {} of {} bytes is not possible in this library, skipped\n",
                   options.library, spec.name, bytes);
      }
    }
  }
  return plan;
}

void print_header(const Options& options, int ranks) {
  fmt::print(
      "# {}: {} ranks, cadence {}, warm-up {}, {}..{} iterations, {:.3g} s per cell\n"
      "# time per call = last rank's completion - first rank's start (shared CLOCK_MONOTONIC)"
      "{}; median with 95% bootstrap CI (2000 resamples)\n",
      options.library, ranks, cadence_text(options.limits), options.warmup,
      options.limits.min_iterations, options.limits.max_iterations, options.limits.cell_seconds,
      options.limits.streaming       ? ", averaged over batches of 16 back-to-back calls"
      : options.limits.barrier_after ? ", a barrier after each call"
                                     : ", a barrier before each call");
  fmt::print("{:<15} {:<10} {:>9} {:>7} {:>11} {:>23} {:>11} {:>11}\n", "collective", "algorithm",
             "bytes", "iters", "median_us", "95% CI (us)", "p5_us", "p95_us");
}

}  // namespace

std::vector<size_t> parse_sizes(std::string_view spec) {
  std::vector<size_t> sizes;
  for (const std::string& part : split(spec, ',')) {
    const std::string what = fmt::format("--sizes entry '{}'", part);
    if (part.empty()) throw Error(Errc::usage, fmt::format("--sizes '{}': empty entry", spec));
    const auto fields = split(part, ':');
    if (fields.size() == 1) {
      sizes.push_back(parse_bytes(fields[0], what));
      continue;
    }
    if (fields.size() > 3) throw Error(Errc::usage, what + ": expected FROM:TO[:FACTOR]");
    const uint64_t from = parse_bytes(fields[0], what);
    const uint64_t to = parse_bytes(fields[1], what);
    const uint64_t factor = fields.size() == 3 ? parse_bytes(fields[2], what) : 2;
    if (factor < 2 || from == 0 || from > to) {
      throw Error(Errc::usage, what + ": needs 0 < FROM <= TO and FACTOR >= 2");
    }
    for (uint64_t s = from; s <= to; s *= factor) {
      sizes.push_back(s);
      if (s > UINT64_MAX / factor) break;
    }
  }
  return sizes;
}

Options parse_options(int argc, char** argv, const std::string& default_library) {
  Options o;
  o.library = default_library;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    std::string name = arg, value;
    bool has_value = false;
    if (const size_t eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      has_value = true;
    }
    auto next = [&]() -> std::string {
      if (has_value) return value;
      if (i + 1 >= argc) throw Error(Errc::usage, fmt::format("{} needs a value", name));
      return argv[++i];
    };
    if (name == "--coll") {
      o.collectives.clear();
      for (auto& c : split(next(), ',')) {
        if (!c.empty()) o.collectives.push_back(c);
      }
    } else if (name == "--algo") {
      const std::string algo = next();
      if (algo != "native" && algo != "auto" && algo != "all") {
        throw Error(Errc::usage,
                    fmt::format("--algo '{}': a peer runs its library's own choice only", algo));
      }
    } else if (name == "--sizes") {
      o.sizes = parse_sizes(next());
    } else if (name == "--cadence") {
      const std::string c = next();
      if (c != "isolated" && c != "barrier-after" && c != "streaming") {
        throw Error(Errc::usage,
                    fmt::format("--cadence '{}': isolated, barrier-after or streaming", c));
      }
      o.limits.streaming = c == "streaming";
      o.limits.barrier_after = c == "barrier-after";
    } else if (name == "--cell-time") {
      o.limits.cell_seconds = parse_number(next(), name, 0, 3600);
    } else if (name == "--warmup") {
      o.warmup = static_cast<int>(parse_number(next(), name, 0, 1000000));
    } else if (name == "--min-iters") {
      o.limits.min_iterations = static_cast<int>(parse_number(next(), name, 1, 1e8));
    } else if (name == "--max-iters") {
      o.limits.max_iterations = static_cast<int>(parse_number(next(), name, 1, 1e8));
    } else if (name == "--tsv") {
      o.tsv = next();
    } else if (name == "--library") {
      o.library = next();
    } else if (name == "-n" || name == "--np") {
      o.fork_ranks = static_cast<int>(parse_number(next(), name, 1, 1024));
    } else if (name == "--quiet") {
      o.quiet = true;
    } else if (name == "--help" || name == "-h") {
      throw Error(Errc::usage,
                  "options: --coll LIST --sizes SPEC --cadence isolated|barrier-after|streaming "
                  "--cell-time S "
                  "--warmup N --min-iters N --max-iters N --tsv FILE --library NAME --quiet "
                  "[-n N (gloo: fork N ranks)]");
    } else {
      throw Error(Errc::usage, fmt::format("unknown option '{}' (try --help)", arg));
    }
  }
  if (o.library.empty() || o.library.find_first_of("\t\n") != std::string::npos) {
    throw Error(Errc::usage, "--library: needs a name without tabs or newlines");
  }
  return o;
}

void run(Job& job, CollectiveFactory factory, const Options& options,
         const std::string& description) {
  const bool leader = job.rank() == 0;
  const auto plan = make_plan(job, factory, options);
  if (leader) {
    // The first line names the library and version (grove bench --peers quotes it).
    fmt::print("# {}\n", description);
    if (!options.quiet) print_header(options, job.size());
    std::fflush(stdout);
  }
  const bool show_progress = leader && isatty(STDERR_FILENO);
  const double begin = monotonic_seconds();
  const char* cadence = cadence_text(options.limits);

  std::vector<tsv::Cell> results;
  uint32_t generation = 0;
  for (const Planned& p : plan) {
    Collective& c = *p.collective;
    c.prepare(p.bytes, ++generation);
    c.call();
    c.verify();
    for (int i = 0; i < options.warmup; ++i)
      c.call();
    LoopOps ops{job, c};
    Stamps stamps;
    time_cell(ops, options.limits, stamps);
    const auto starts = job.gather(stamps.start);
    const auto ends = job.gather(stamps.end);
    if (!leader) continue;
    tsv::Cell cell{options.library,
                   {std::string(p.spec.name), kAlgorithm, job.size(), p.bytes, cadence},
                   iteration_times(starts, ends, options.limits.streaming),
                   rank_times(starts, ends, options.limits.streaming)};
    if (!options.quiet) {
      const stats::Summary s = stats::summarize(cell.samples, cell.key.text());
      fmt::print("{:<15} {:<10} {:>9} {:>7} {:>11.2f} {:>23} {:>11.2f} {:>11.2f}\n",
                 cell.key.collective, cell.key.algorithm, cell.key.bytes, s.count, s.median * 1e6,
                 fmt::format("[{:.2f}, {:.2f}]", s.median_ci.lo * 1e6, s.median_ci.hi * 1e6),
                 s.p5 * 1e6, s.p95 * 1e6);
      std::fflush(stdout);
    }
    results.push_back(std::move(cell));
    if (show_progress) {
      const double elapsed = monotonic_seconds() - begin;
      const size_t done = results.size();
      fmt::print(stderr, "\r{}/{} cells, {:.0f} s elapsed, ~{:.0f} s left   ", done, plan.size(),
                 elapsed,
                 elapsed / static_cast<double>(done) * static_cast<double>(plan.size() - done));
      if (done == plan.size()) fmt::print(stderr, "\n");
    }
  }
  if (leader && !options.tsv.empty()) tsv::write_file(options.tsv, tsv::rows_of(results));
}

void expect_pattern(std::string_view collective, int rank, std::span<const std::byte> got,
                    int source_rank, size_t source_offset, uint32_t generation) {
  for (size_t i = 0; i < got.size(); ++i) {
    const std::byte want = cells::pattern(source_rank, source_offset + i, generation);
    if (got[i] != want) {
      throw Error(Errc::internal,
                  fmt::format("peer {}: rank {} received {:#04x} for byte {} of rank {}, "
                              "expected {:#04x}",
                              collective, rank, std::to_integer<int>(got[i]), source_offset + i,
                              source_rank, std::to_integer<int>(want)));
    }
  }
}

void expect_sums(std::string_view collective, int rank, std::span<const float> got,
                 size_t first_index, int ranks, uint32_t generation) {
  for (size_t i = 0; i < got.size(); ++i) {
    const float want = cells::expected_sum(ranks, first_index + i, generation);
    if (got[i] != want) {
      throw Error(Errc::internal,
                  fmt::format("peer {}: rank {} element {} is {}, expected the sum {}", collective,
                              rank, first_index + i, got[i], want));
    }
  }
}

std::optional<Kind> kind_named(std::string_view name) {
  static const std::pair<std::string_view, Kind> kinds[] = {
      {"bcast", Kind::bcast},
      {"scatter", Kind::scatter},
      {"gather", Kind::gather},
      {"allgather", Kind::allgather},
      {"alltoall", Kind::alltoall},
      {"barrier", Kind::barrier},
      {"allreduce", Kind::allreduce},
      {"reduce", Kind::reduce},
      {"reduce_scatter", Kind::reduce_scatter},
      {"allgatherv", Kind::allgatherv},
      {"alltoallv", Kind::alltoallv},
  };
  for (const auto& [known, kind] : kinds) {
    if (known == name) return kind;
  }
  return std::nullopt;
}

void verify_result(Kind kind, std::string_view name, int rank, int size, size_t block,
                   std::span<const std::byte> recv, std::span<const float> frecv,
                   uint32_t generation) {
  const size_t b = block;
  const size_t elements = b / sizeof(float);
  const auto n = static_cast<size_t>(size);
  switch (kind) {
    case Kind::bcast:
      expect_pattern(name, rank, recv.first(b), 0, 0, generation);
      break;
    case Kind::scatter:
      expect_pattern(name, rank, recv.first(b), 0, static_cast<size_t>(rank) * b, generation);
      break;
    case Kind::gather:
    case Kind::allgather:
    case Kind::allgatherv:
      if (kind == Kind::gather && rank != 0) break;
      for (size_t s = 0; s < n; ++s)
        expect_pattern(name, rank, recv.subspan(s * b, b), static_cast<int>(s), 0, generation);
      break;
    case Kind::alltoall:
    case Kind::alltoallv:
      for (size_t s = 0; s < n; ++s) {
        expect_pattern(name, rank, recv.subspan(s * b, b), static_cast<int>(s),
                       static_cast<size_t>(rank) * b, generation);
      }
      break;
    case Kind::barrier:
      break;
    case Kind::allreduce:
    case Kind::reduce:
      if (kind == Kind::reduce && rank != 0) break;
      expect_sums(name, rank, frecv.first(elements), 0, size, generation);
      break;
    case Kind::reduce_scatter:
      expect_sums(name, rank, frecv.first(elements), static_cast<size_t>(rank) * elements, size,
                  generation);
      break;
  }
}

}  // namespace grove::bench::peer
