// `grove select`: the selection in effect (coll/select.hpp) and the
// algorithm registry.
//
//   grove select --show [-n N] [--coll C] [--tuning FILE] [--param k=v]
//       the decision rows in effect per collective, in precedence order
//       (forced parameter, tuning file, built-in), keeping the rows whose
//       ranks range holds N.
//   grove select --algorithms [--markdown]
//       every collective's algorithms: arguments, doc, closed-form cost.
//   grove select --check FILE
//       reads a tuning file and prints it back in canonical form (errors
//       name the file and line).

#include <fmt/format.h>

#include "coll/algorithm.hpp"
#include "coll/collective.hpp"
#include "coll/select.hpp"
#include "command.hpp"
#include "core/params.hpp"
#include "grove/error.hpp"

namespace grove::tools {
namespace {

struct Options {
  bool show = false;
  bool algorithms = false;
  bool markdown = false;
  std::string check;
  int ranks = 0;
  std::vector<std::string> collectives;
  std::string tuning;
  std::vector<std::string> sets;
};

std::string arguments_of(const coll::AlgorithmInfo& a) {
  std::string out;
  if (a.default_radix > 0) out += fmt::format("K (default {})", a.default_radix);
  if (a.takes_segment) out += std::string(out.empty() ? "" : ", ") + "seg=S";
  if (a.takes_posts) out += std::string(out.empty() ? "" : ", ") + "posts=P";
  return out;
}

std::vector<std::string> chosen_collectives(const Options& o) {
  std::vector<std::string> out;
  for (int i = 1; i <= static_cast<int>(coll::Collective::reduce_scatter); ++i) {
    const std::string c(coll::collective_name(static_cast<coll::Collective>(i)));
    if (!o.collectives.empty() &&
        std::find(o.collectives.begin(), o.collectives.end(), c) == o.collectives.end()) {
      continue;
    }
    out.push_back(c);
  }
  for (const std::string& c : o.collectives) {
    if (!coll::collective_named(c)) {
      throw Error(Errc::usage, fmt::format("grove select: unknown collective '{}'", c));
    }
  }
  return out;
}

void print_algorithms(const Options& o) {
  if (o.markdown) {
    fmt::print("| collective | algorithm | arguments | what it does | closed-form cost |\n");
    fmt::print("|---|---|---|---|---|\n");
  }
  for (const std::string& c : chosen_collectives(o)) {
    if (!o.markdown) fmt::print("{}\n", c);
    for (const coll::AlgorithmInfo& a : coll::algorithms_of(c)) {
      std::string cost = a.cost.cost ? a.cost.formula : "not modelled";
      if (a.cost.copies) cost += "; with host terms + " + a.cost.copies_formula + " (copies)";
      if (o.markdown) {
        fmt::print("| {} | `{}` | {} | {} | {} |\n", c, a.name, arguments_of(a), a.doc, cost);
      } else {
        fmt::print("  {:<20} {:<18} {}\n", a.name, arguments_of(a), a.doc);
      }
    }
  }
}

int run(const Options& o) {
  params::load_process_params();
  auto& registry = params::Registry::global();
  for (const std::string& kv : o.sets) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos)
      throw Error(Errc::usage, fmt::format("--param '{}': expected name=value", kv));
    registry.set(kv.substr(0, eq), kv.substr(eq + 1), params::Source::command_line);
  }
  if (!o.tuning.empty()) registry.set("tuning_file", o.tuning, params::Source::command_line);
  if (!o.check.empty()) {
    fmt::print("{}", coll::format_select_table(coll::load_select_table(o.check)));
    return 0;
  }
  if (o.algorithms) {
    print_algorithms(o);
    return 0;
  }
  if (!o.show) throw Error(Errc::usage, "grove select: give --show, --algorithms or --check FILE");
  if (o.ranks < 0) throw Error(Errc::usage, "grove select: -n must be at least 1");
  coll::tuning_table();  // a bad tuning file is reported before anything is printed
  fmt::print("selection{}: forced <collective>_algorithm > tuning file{} > built-in\n",
             o.ranks > 0 ? fmt::format(" for {} ranks", o.ranks) : "",
             registry.get("tuning_file").text.empty()
                 ? " (none)"
                 : fmt::format(" ({})", registry.get("tuning_file").text));
  for (const std::string& c : chosen_collectives(o)) {
    fmt::print("{}\n{}", c, coll::describe_rows(*coll::collective_named(c), o.ranks));
  }
  return 0;
}

const RegisterCommand select_command{{
    "select",
    "Show the selection tables in effect, the algorithm registry, or check a tuning file",
    [](CLI::App& sub) -> std::function<int()> {
      auto o = std::make_shared<Options>();
      sub.add_flag("--show", o->show, "The decision rows in effect, in precedence order");
      sub.add_option("-n,--ranks", o->ranks, "Only rows whose ranks range holds N");
      sub.add_option("--coll", o->collectives, "Only these collectives")->delimiter(',');
      sub.add_option("--tuning", o->tuning, "Use this tuning file (as tuning_file=FILE)");
      sub.add_flag("--algorithms", o->algorithms, "Every collective's algorithms");
      sub.add_flag("--markdown", o->markdown, "--algorithms as a Markdown table");
      sub.add_option("--check", o->check, "Read a tuning file and print it back");
      sub.add_option("--param", o->sets, "Set name=value first (e.g. bcast_algorithm=binomial)");
      return [o] { return run(*o); };
    },
}};

}  // namespace
}  // namespace grove::tools
