#include "coll/cost_terms.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <fmt/format.h>

#include "coll/algorithm.hpp"
#include "grove/error.hpp"

namespace grove::coll {

ClosedForm closed_form(std::string formula, std::string published,
                       std::function<bool(const CostCase&)> exact_when, double tolerance,
                       bool two_sided,
                       std::function<double(const CostCase&, const PortModel&)> cost) {
  ClosedForm form;
  form.formula = std::move(formula);
  form.published = std::move(published);
  form.exact_when = std::move(exact_when);
  form.tolerance = tolerance;
  form.two_sided = two_sided;
  form.cost = std::move(cost);
  return form;
}

ClosedForm with_copies(ClosedForm form, std::string formula,
                       std::function<double(const CostCase&, const PortModel&)> copies) {
  form.copies_formula = std::move(formula);
  form.copies = std::move(copies);
  return form;
}

namespace cost {
namespace {

// The largest base-k digit sum among 0 .. n (n >= 0).
int max_digit_sum(int64_t n, int k) {
  std::vector<int> digits;
  for (int64_t x = n; x > 0; x /= k)
    digits.push_back(static_cast<int>(x % k));
  int above = 0, best = 0;
  for (int j = static_cast<int>(digits.size()) - 1; j >= 0; --j) {
    // Keep the digits above j, lower digit j by one, fill below with k-1.
    if (digits[static_cast<size_t>(j)] > 0)
      best = std::max(best, above + digits[static_cast<size_t>(j)] - 1 + j * (k - 1));
    above += digits[static_cast<size_t>(j)];
  }
  return std::max(best, above);  // n itself
}

}  // namespace

int ceil_log(int64_t n, int64_t k) {
  int d = 0;
  for (int64_t reach = 1; reach < n; reach *= k)
    ++d;
  return d;
}

int floor_log2(int64_t n) {
  int d = 0;
  while ((int64_t{2} << d) <= n)
    ++d;
  return d;
}

bool is_power(int64_t n, int64_t k) {
  int64_t x = 1;
  while (x < n)
    x *= k;
  return x == n;
}

bool full_kary(int64_t n, int64_t k) {
  int64_t total = 1, level = 1;
  while (total < n) {
    level *= k;
    total += level;
  }
  return total == n;
}

int kary_height(int n, int k) {
  if (k < 1) throw Error(Errc::invalid_argument, fmt::format("k-ary radix {}", k));
  int height = 0;
  int64_t level = 1, total = 1;
  while (total < n) {
    level *= k;
    total += level;
    ++height;
  }
  return height;
}

int radix_of(const CostCase& c) {
  return c.spec->name == "binary" ? 2 : c.spec->radix;
}
bool always(const CostCase&) {
  return true;
}
bool never(const CostCase&) {
  return false;
}
bool power_of_two(const CostCase& c) {
  return is_power(c.ranks, 2);
}
bool even_split(const CostCase& c) {
  return is_power(c.ranks, 2) && std::fmod(c.bytes, c.ranks) == 0;
}

double kary_gather(int p, int k, double block, const PortModel& m) {
  // The children of a node finish together and their subtrees' messages
  // queue on its ingress; each level is costed as if full, with at most
  // P-1 children.
  const int d = kary_height(p, k);
  const int children = std::min(k, p - 1);
  if (d <= 1) return p <= 1 ? 0 : m.u(block) + m.l(block) + (children - 1) * m.w(block);
  double t = 0;
  double subtree = 1;  // ranks in a child's subtree at the current level
  for (int level = 1; level <= d; ++level) {
    const double bytes = subtree * block;
    t += m.u(bytes) + m.l(bytes) + (children - 1) * m.w(bytes);
    subtree = subtree * k + 1;
  }
  return t;
}

double kary_bcast(int p, int k, double bytes, const PortModel& m) {
  if (m.shared_port) {
    if (p <= 1) return 0;
    return shared_fan_out(
        topo::make_tree(topo::Shape::kary, p, 0, k), [bytes](int) { return bytes; }, m);
  }
  // A rank's path costs, per hop, its position among its parent's children
  // times u, plus L. Levels above the last are full, so the worst rank is
  // either the rightmost of level d-1, (d-1)(k u + L), or the level-d rank
  // whose index i in its level has the largest base-k digit sum,
  // (d + digitsum(i)) u + d L.
  if (p <= 1) return 0;
  const int d = kary_height(p, k);
  int64_t above = 0, level = 1;  // ranks in levels 0 .. d-1
  for (int i = 0; i < d; ++i) {
    above += level;
    level *= k;
  }
  const int64_t last_level = p - above;  // ranks on level d (>= 1)
  const double deep = (d + max_digit_sum(last_level - 1, k)) * m.u(bytes) + d * m.l(bytes);
  const double shallow = (d - 1) * (k * m.u(bytes) + m.l(bytes));
  return std::max(deep, shallow);
}

double shared_fan_out(const topo::Tree& tree, FunctionRef<double(int child)> edge_bytes,
                      const PortModel& m) {
  struct Sending {
    double work;  // u(bytes): the port's time for it alone
    double bytes;
    int child;
  };
  std::vector<std::pair<int, double>> arrived{{tree.root, 0.0}};  // (rank, arrival)
  std::vector<int> children;
  std::vector<Sending> sends;
  double last = 0;
  while (!arrived.empty()) {
    const auto [rank, at] = arrived.back();
    arrived.pop_back();
    last = std::max(last, at);
    topo::children(tree, rank, children);
    sends.clear();
    for (int child : children) {
      const double bytes = edge_bytes(child);
      if (bytes > 0) sends.push_back({m.u(bytes), bytes, child});
    }
    // Equal shares: the smallest ends first, when every send has had its
    // work; the rest go on sharing among fewer.
    std::sort(sends.begin(), sends.end(),
              [](const Sending& a, const Sending& b) { return a.work < b.work; });
    double done_before = 0;  // the works of the sends that ended earlier
    const size_t k = sends.size();
    for (size_t i = 0; i < k; ++i) {
      const double ends = done_before + static_cast<double>(k - i) * sends[i].work;
      done_before += sends[i].work;
      arrived.emplace_back(sends[i].child, at + ends + m.l(sends[i].bytes));
    }
  }
  return last;
}

double sum_doubling(int steps, double block, const PortModel& m) {
  double t = 0;
  for (int i = 0; i < steps; ++i)
    t += m.u(std::ldexp(block, i)) + m.l(std::ldexp(block, i));
  return t;
}

double halving(int p, double n, const PortModel& m) {
  double t = 0;
  for (int64_t part = 2; part <= p; part *= 2)
    t += m.u(n / static_cast<double>(part)) + m.l(n / static_cast<double>(part));
  return t;
}

}  // namespace cost
}  // namespace grove::coll
